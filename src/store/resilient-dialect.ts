/** Wraps a Kysely dialect so a dropped database connection or a full disk becomes a retryable 503, never a crash. */
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  Kysely,
  QueryResult,
  TransactionSettings,
} from "kysely";
import { ChaingateError } from "../errors/chaingate-error.js";

/**
 * PostgreSQL SQLSTATEs and socket codes that mean "this connection is gone" (a restart, a failover,
 * pg_terminate_backend, a pooler restart, idle_session_timeout), not "this statement is wrong".
 */
const CONNECTION_SQLSTATES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);
const CONNECTION_ERRNOS = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTCONN",
  "EHOSTUNREACH",
]);
const CONNECTION_MESSAGE =
  /connection terminated|terminating connection|not queryable|connection (?:was )?closed|server closed the connection|Connection ended/i;

/** The store cannot take this write or read now (disk full, read-only, out of resources), but may later. */
const STORAGE_SQLSTATES = new Set(["53100", "53200", "53300", "25006", "58030"]);
const SQLITE_STORAGE = /^SQLITE_(?:FULL|IOERR|READONLY|CANTOPEN|BUSY|LOCKED|NOMEM|PROTOCOL)/;

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A fault of the connection itself: the statement may be run again on a fresh one. */
export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (code !== undefined && (CONNECTION_SQLSTATES.has(code) || CONNECTION_ERRNOS.has(code))) return true;
  return CONNECTION_MESSAGE.test(error.message);
}

/** A fault of the store (connection or storage) rather than of the statement. */
export function isStoreFault(error: unknown): boolean {
  if (isConnectionFault(error)) return true;
  const code = codeOf(error);
  return code !== undefined && (STORAGE_SQLSTATES.has(code) || SQLITE_STORAGE.test(code));
}

export function storeUnavailable(error: unknown): ChaingateError {
  const code = codeOf(error);
  return new ChaingateError(`The database is unavailable (${code ?? "connection lost"}); retry shortly`, {
    code: "STORE_UNAVAILABLE",
    cause: error,
  });
}

/** A store fault as the 503 it answers; any other error unchanged. */
export function translate(error: unknown): unknown {
  return error instanceof ChaingateError || !isStoreFault(error) ? error : storeUnavailable(error);
}

/** How often, and how far apart, a lost connection is re-opened before the request gets a 503. */
const CONNECT_ATTEMPTS = 3;
const CONNECT_BACKOFF_MS = 150;

class ResilientConnection implements DatabaseConnection {
  inTransaction = false;
  /**
   * A begin on the wire whose answer no one has awaited yet (`pipelined`): the transaction's first
   * statement is sent behind it at once and hears how it went.
   */
  begun: Promise<void> | undefined;

  constructor(
    public inner: DatabaseConnection,
    private readonly driver: ResilientDriver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const begun = this.begun;
    if (begun !== undefined) {
      this.begun = undefined;
      return await this.firstOfTransaction<R>(begun, query);
    }
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (error) {
      // Outside a transaction nothing else rides on this connection: run the statement on a fresh
      // one. Inside, the transaction is lost with the connection; its caller gets a retryable 503
      // and nothing it wrote was committed.
      if (this.inTransaction || !isConnectionFault(error)) throw translate(error);
      await this.driver.renew(this);
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (again) {
        throw translate(again);
      }
    }
  }

  /**
   * The transaction's first statement, sent behind its begin without waiting for it (one round
   * trip for both). A begin lost with its connection began nothing, and the statement failed with
   * it: both go again on a fresh connection, as a begin alone would have.
   */
  private async firstOfTransaction<R>(begun: Promise<void>, query: CompiledQuery): Promise<QueryResult<R>> {
    const result = this.inner.executeQuery<R>(query);
    try {
      await begun;
    } catch (error) {
      await result.catch(() => {});
      if (!isConnectionFault(error)) throw translate(error);
      await this.driver.beginAgain(this, {});
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (again) {
        throw translate(again);
      }
    }
    try {
      return await result;
    } catch (error) {
      throw translate(error);
    }
  }

  /** Waits for a begin no statement followed (a transaction that ran none): commit and rollback come after it. */
  async settleBegin(): Promise<void> {
    const begun = this.begun;
    this.begun = undefined;
    await begun;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class ResilientDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    /** The driver's connections pipeline (pg's `pipeline`): a begin need not be answered before the next statement is sent. */
    private readonly pipelined: boolean,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  private async acquireInner(): Promise<DatabaseConnection> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inner.acquireConnection();
      } catch (error) {
        if (!isStoreFault(error) || attempt >= CONNECT_ATTEMPTS) throw translate(error);
        await new Promise((r) => setTimeout(r, CONNECT_BACKOFF_MS * attempt));
      }
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ResilientConnection(await this.acquireInner(), this);
  }

  /** Gives the broken connection back (the pool discards it) and takes a fresh one. */
  async renew(connection: ResilientConnection): Promise<void> {
    await this.inner.releaseConnection(connection.inner).catch(() => {});
    connection.inner = await this.acquireInner();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as ResilientConnection;
    if (this.pipelined && settings.isolationLevel === undefined && settings.accessMode === undefined) {
      // On the wire now; answered with the transaction's first statement (a round trip fewer for
      // every transaction, #42). A plain begin answers nothing the caller needs before then.
      const begun = this.inner.beginTransaction(c.inner, settings);
      begun.catch(() => {});
      c.begun = begun;
      c.inTransaction = true;
      return;
    }
    try {
      await this.inner.beginTransaction(c.inner, settings);
    } catch (error) {
      if (!isConnectionFault(error)) throw translate(error);
      await this.beginAgain(c, settings);
    }
    c.inTransaction = true;
  }

  /** After a begin lost with its connection: nothing was begun, so begin on a fresh one. */
  async beginAgain(c: ResilientConnection, settings: TransactionSettings): Promise<void> {
    await this.renew(c);
    await this.inner.beginTransaction(c.inner, settings).catch((again: unknown) => {
      throw translate(again);
    });
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as ResilientConnection;
    try {
      await c.settleBegin();
      await this.inner.commitTransaction(c.inner);
    } catch (error) {
      throw translate(error);
    } finally {
      c.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as ResilientConnection;
    try {
      await c.settleBegin();
      await this.inner.rollbackTransaction(c.inner);
    } catch (error) {
      // A rollback on a dead connection has nothing to undo: the server already dropped the work.
      if (!isConnectionFault(error)) throw translate(error);
    } finally {
      c.inTransaction = false;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection((connection as ResilientConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

export class ResilientDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    /** The inner driver's connections pipeline their statements (pg's `pipeline` option). */
    private readonly pipelined = false,
  ) {}

  createAdapter() {
    return this.inner.createAdapter();
  }

  /** The driver made for the Kysely instance (it asks once): the group commit's own transactions use it too. */
  driver: Driver | undefined;

  createDriver(): Driver {
    this.driver = new ResilientDriver(this.inner.createDriver(), this.pipelined);
    return this.driver;
  }

  createQueryCompiler() {
    return this.inner.createQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>) {
    return this.inner.createIntrospector(db);
  }
}
