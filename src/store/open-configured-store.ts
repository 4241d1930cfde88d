/** The store the configuration names: PostgreSQL at --database-url, else SQLite in the data directory. */
import { join } from "node:path";
import type { Config } from "../config/config.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import { openStore, type Store } from "./database.js";

export async function openConfiguredStore(config: Config, deps: Lifecycle): Promise<Store> {
  const store = await openStore(
    config.databaseUrl
      ? { kind: "postgres", url: config.databaseUrl }
      : { kind: "sqlite", path: join(config.dataDir, "chaingate.sqlite") },
    (error) => deps.logger.warn({ err: error }, "database connection lost; the next query opens a fresh one"),
  );
  deps.shutdown.add("store", () => store.close());
  return store;
}
