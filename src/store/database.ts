/** Opens the store (SQLite file by default, PostgreSQL with a URL) and runs migrations. */
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import {
  CompiledQuery,
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
} from "kysely";
import pg from "pg";
import { ChaingateError } from "../errors/chaingate-error.js";
import { CLUSTER_CHANNEL, type ClusterBus, LocalBus, PostgresBus } from "./cluster-bus.js";
import { secureDatabaseFile } from "./data-dir.js";
import { type CommitDurability, GroupCommit } from "./group-commit.js";
import { MIGRATIONS } from "./migrations/index.js";
import { runMarkedByName } from "./named-statements.js";
import { OwnTransactions, type SyncStatements } from "./own-transaction.js";
import { ResilientDialect, translate } from "./resilient-dialect.js";
import type { Database } from "./schema.js";
import { REQUEST_CHECKPOINT_PAGES, WalCheckpointer } from "./wal-checkpointer.js";
import { WalFlush } from "./wal-flush.js";

export type StoreKind = "sqlite" | "postgres";

export interface Store {
  readonly db: Kysely<Database>;
  readonly kind: StoreKind;
  /** Write transactions of the request paths, committed in groups (see GroupCommit). */
  readonly group: GroupCommit;
  /** Events every instance on this store hears at once (LISTEN/NOTIFY on PostgreSQL). */
  readonly bus: ClusterBus;
  close(): Promise<void>;
}

export type StoreLocation = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** Where the store reports faults it recovered from by itself (a dropped connection). */
export type StoreFaultListener = (error: Error) => void;

export function postgresPool(url: string, onFault: StoreFaultListener): pg.Pool {
  // Block numbers and epoch-ms timestamps are bigint columns; they fit a JS number exactly.
  const types = {
    getTypeParser(oid: number, format?: "text" | "binary") {
      if (oid === INT8_OID) return (value: string) => Number(value);
      if (oid === NUMERIC_OID) return (value: string) => value;
      return format === "binary"
        ? pg.types.getTypeParser(oid, "binary")
        : pg.types.getTypeParser(oid, "text");
    },
  } as pg.CustomTypesConfig;
  // Pipelined: a statement goes on the wire without waiting for the one before it to be answered
  // (a transaction's begin and its first statement cost one round trip, see ResilientDialect).
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    types,
    connectionTimeoutMillis: 10_000,
    pipeline: true,
  });
  // A connection that dies (server restart, failover, pg_terminate_backend) makes its client emit
  // "error". Unheard, that is an uncaught exception that ends the process; heard, the pool drops the
  // client and the next query opens a fresh one (ResilientDialect runs it there).
  pool.on("error", onFault);
  pool.on("connect", (client) => {
    client.on("error", onFault);
    runMarkedByName(client);
  });
  return pool;
}

export async function openStore(
  location: StoreLocation,
  onFault: StoreFaultListener = () => {},
): Promise<Store> {
  let opened: {
    db: Kysely<Database>;
    sqliteFile: SQLite.Database | undefined;
    dialect?: ResilientDialect | undefined;
  };
  try {
    opened =
      location.kind === "sqlite" ? openSqlite(location.path) : await openPostgres(location.url, onFault);
  } catch (error) {
    throw new ChaingateError(`Cannot open the ${location.kind} store: ${(error as Error).message}`, {
      code: "STORE_UNAVAILABLE",
      cause: error,
    });
  }
  const { db, sqliteFile, dialect } = opened;
  await migrate(db);
  const checkpointer =
    sqliteFile && location.kind === "sqlite"
      ? walCheckpointer(sqliteFile, location.path, onFault)
      : undefined;
  const flush = sqliteFile && location.kind === "sqlite" ? walFlushFor(location.path) : undefined;
  const durability: CommitDurability | undefined = flush && {
    relax: CompiledQuery.raw("pragma synchronous = NORMAL"),
    restore: CompiledQuery.raw("pragma synchronous = FULL"),
    flush: (inline) => flush.flush(inline),
  };
  // One group at a time on either store (decision 166): on PostgreSQL concurrent groups of one
  // instance mostly queued on each other's nonce rows, where one bigger group commits sooner. Lazy
  // writes (a sent transaction's state) have a lane of their own (decisions 174, 210), and on
  // PostgreSQL a lone job's commit can follow its last statement unanswered (decision 178).
  const isPostgres = location.kind === "postgres";
  const own = sqliteFile && ownStatementsOn(sqliteFile);
  const group = new GroupCommit(db, 1, {
    durability,
    pipelinedCommit: isPostgres,
    own,
    transactions: own && dialect && new OwnTransactions(dialect, own),
  });
  let bus: ClusterBus = new LocalBus();
  if (location.kind === "postgres") {
    const shared = new PostgresBus(
      location.url,
      async (payload) => {
        await sql`select pg_notify(${CLUSTER_CHANNEL}, ${payload})`.execute(db);
      },
      onFault,
    );
    await shared.start();
    bus = shared;
  }
  return {
    db,
    kind: location.kind,
    group,
    bus,
    close: async () => {
      await bus.close();
      await group.drain();
      await flush?.close();
      await checkpointer?.close();
      await db.destroy();
    },
  };
}

function openSqlite(path: string): {
  db: Kysely<Database>;
  sqliteFile: SQLite.Database | undefined;
  dialect: ResilientDialect;
} {
  if (path !== ":memory:") {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    secureDatabaseFile(path);
  }
  const sqlite = new SQLite(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("busy_timeout = 5000");
  // Statement journals in memory: each job of a group runs under a savepoint, and SQLite keeps the
  // first copy of every page a savepoint touches; past 64 KiB it spilled them to a temporary file,
  // two writes a page (a third of the request connection's write calls in a burst, decision 181).
  // They are never needed after a crash (the WAL is), and this connection's sorts are bounded.
  sqlite.pragma("temp_store = MEMORY");
  // Every commit is on disk before it is answered (a signed transaction's record survives a
  // power cut, not only a crash): affordable because request writes share commits and their
  // sync is done off the event loop (GroupCommit, WalFlush).
  sqlite.pragma("synchronous = FULL");
  sqlite.defaultSafeIntegers(false);
  const dialect = new ResilientDialect(new SqliteDialect({ database: withStatementCache(sqlite) }));
  const db = new Kysely<Database>({ dialect });
  return { db, sqliteFile: path === ":memory:" ? undefined : sqlite, dialect };
}

async function openPostgres(
  url: string,
  onFault: StoreFaultListener,
): Promise<{ db: Kysely<Database>; sqliteFile: undefined }> {
  const pool = postgresPool(url, onFault);
  // Fail fast with a clear message instead of on the first request.
  const client = await pool.connect();
  client.release();
  return {
    db: new Kysely<Database>({ dialect: new ResilientDialect(new PostgresDialect({ pool }), true) }),
    sqliteFile: undefined,
  };
}

/**
 * Checkpoints leave the request connection for a worker; if the worker dies, they come back. The
 * worker watches the WAL beside the file's real path (where SQLite puts it). The request connection
 * keeps a checkpoint of its own at REQUEST_CHECKPOINT_PAGES: under writes that never pause, a
 * checkpoint running beside the writer never finds the WAL fully copied, so the WAL would never
 * start over; the writer's own, rare and short (the worker has copied nearly everything), lets it.
 */
function walCheckpointer(
  connection: SQLite.Database,
  path: string,
  onFault: StoreFaultListener,
): WalCheckpointer {
  connection.pragma(`wal_autocheckpoint = ${REQUEST_CHECKPOINT_PAGES}`);
  return new WalCheckpointer(realpathSync(path), onFault, () =>
    connection.pragma("wal_autocheckpoint = 1000"),
  );
}

/**
 * SQLite names the WAL after the database file's real path (a symlinked file has its WAL beside the
 * target). Where it cannot be found, group commits keep syncing inside the commit instead.
 */
function walFlushFor(path: string): WalFlush | undefined {
  const wal = `${realpathSync(path)}-wal`;
  return existsSync(wal) ? new WalFlush(wal) : undefined;
}

/**
 * The group commit's own statements (savepoints, the durability pragmas) run straight on the file
 * SQLite connection (decision 202), prepared through its statement cache (withStatementCache),
 * their faults translated as the dialect translates them.
 */
function ownStatementsOn(sqlite: SQLite.Database): SyncStatements {
  return {
    run(query) {
      try {
        sqlite.prepare(query.sql).run();
      } catch (error) {
        throw translate(error);
      }
    },
    get inTransaction() {
      return sqlite.inTransaction;
    },
  };
}

/**
 * Kysely prepares every query anew; with better-sqlite3 a statement is reusable, and preparing is
 * a large share of a small query's cost. Statements are cached by their SQL text (bounded).
 */
function withStatementCache(sqlite: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof sqlite.prepare;
  return sqlite;
}

class StaticMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrations() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new ChaingateError(`Database migration ${failed} failed: ${(error as Error).message}`, {
      code: "MIGRATION_FAILED",
      cause: error,
    });
  }
}
