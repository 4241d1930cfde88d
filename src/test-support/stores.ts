/** Store targets for tests: SQLite always, PostgreSQL when reachable, each in its own throwaway database. */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { openStore, type Store, type StoreLocation } from "../store/database.js";

export type StoreTarget = "sqlite" | "postgres";

export const POSTGRES_AVAILABLE = inject("postgresUrl") !== null;

/**
 * Runs a suite once per store; the PostgreSQL copy is reported as skipped (not silently absent)
 * when global setup could not reach a server.
 */
export function describeEachStore(title: string, body: (target: StoreTarget) => void): void {
  for (const target of ["sqlite", "postgres"] as const) {
    describe.skipIf(target === "postgres" && !POSTGRES_AVAILABLE)(`${title} [${target}]`, () => body(target));
  }
}

export interface TempStore {
  location: StoreLocation;
  /** For the runtime config: undefined means the SQLite file in the data dir. */
  databaseUrl: string | undefined;
  drop(): Promise<void>;
}

export async function tempStore(target: StoreTarget): Promise<TempStore> {
  if (target === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "chaingate-store-"));
    return {
      location: { kind: "sqlite", path: join(dir, "test.sqlite") },
      databaseUrl: undefined,
      // The file and its WAL go with the directory (a run leaves nothing in the temp folder).
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const adminUrl = inject("postgresUrl");
  if (!adminUrl) throw new Error("PostgreSQL is not available in this run");
  const name = `chaingate_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    location: { kind: "postgres", url: url.toString() },
    databaseUrl: url.toString(),
    drop: async () => {
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

/**
 * The suite's own store on `target`: opened before its tests, closed and its database dropped
 * after them. Read `.store` inside tests and hooks (it is set once the suite starts).
 */
export function suiteStore(target: StoreTarget): { readonly store: Store } {
  let temp: TempStore | undefined;
  const opened = {} as { store: Store };
  beforeAll(async () => {
    temp = await tempStore(target);
    opened.store = await openStore(temp.location);
  });
  afterAll(async () => {
    await opened.store?.close();
    await temp?.drop();
  });
  return opened;
}
