/** The store the configuration names: PostgreSQL at --database-url, else SQLite in the data directory. */
import { join } from "node:path";
import type { Config } from "../config/config.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import { openStore, type Store, type StoreLocation } from "./database.js";

/** Where the configuration puts the store (also for the CLI commands that open it without the service). */
export function storeLocation(config: Config): StoreLocation {
  return config.databaseUrl
    ? { kind: "postgres", url: config.databaseUrl }
    : { kind: "sqlite", path: join(config.dataDir, "chaingate.sqlite") };
}

export async function openConfiguredStore(config: Config, deps: Lifecycle): Promise<Store> {
  const location = storeLocation(config);
  const store = await openStore(location, (error) =>
    location.kind === "postgres"
      ? deps.logger.warn({ err: error }, "database connection lost; the next query opens a fresh one")
      : // The SQLite file's checkpoint worker: checkpoints go back to the request connection.
        deps.logger.warn(
          { err: error },
          "WAL checkpoint worker failed; the request connection checkpoints again",
        ),
  );
  deps.shutdown.add("store", () => store.close());
  return store;
}
