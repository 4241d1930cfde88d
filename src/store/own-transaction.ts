/** A file SQLite group's transaction on the store's one connection: Kysely's steps without its builders (decision 229). */
import {
  CompiledQuery,
  type DatabaseConnection,
  DefaultQueryExecutor,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type QueryCompiler,
  SingleConnectionProvider,
  Transaction,
} from "kysely";
import type { GroupTransactions, OwnStatements } from "./group-commit.js";
import type { Database } from "./schema.js";

const BEGIN = CompiledQuery.raw("begin");
const COMMIT = CompiledQuery.raw("commit");
const ROLLBACK = CompiledQuery.raw("rollback");

/** The group's own statements on the store's synchronous connection, and whether it is in a transaction. */
export interface SyncStatements extends OwnStatements {
  readonly inTransaction: boolean;
}

/** The driver a dialect made for its Kysely instance (see ResilientDialect.driver). */
export interface DriverSource {
  readonly driver: Driver | undefined;
}

/**
 * Runs a transaction as Kysely's `db.connection()` then `transaction().execute()` run it: the
 * connection taken from the same driver (so the same connection and the same lock as every other
 * query of the store), begun, the work given a Transaction bound to it, committed, or rolled back
 * when the work or the commit throws, the connection given back. Kysely's builders cost about
 * 72,000 instructions a transaction measured alone (frozen builder objects, a Kysely instance
 * each, an asserting executor, the driver's begin and commit each through four async layers)
 * against 14,000 for a begin and a commit run straight; here the begin, commit and rollback are
 * the connection's own statements, run at once (SQLite's driver has one connection, which
 * never breaks as a server's does: the dialect's renewal of a lost connection has nothing to do
 * here). `held` runs once the connection is taken and before it is given back: the group's
 * durability pragmas, which must not meet another transaction's commit.
 */
export class OwnTransactions implements GroupTransactions {
  private readonly compiler: QueryCompiler;
  private readonly adapter: DialectAdapter;

  constructor(
    private readonly dialect: Dialect & DriverSource,
    private readonly statements: SyncStatements,
  ) {
    this.compiler = dialect.createQueryCompiler();
    this.adapter = dialect.createAdapter();
  }

  async run<T>(
    work: (trx: Transaction<Database>) => Promise<T>,
    held: { before: () => void; after: () => void },
  ): Promise<T> {
    const driver = this.dialect.driver;
    // Made by Kysely's first query (the migrations run before any group).
    if (driver === undefined) throw new Error("the store's driver is not made yet");
    const connection = await driver.acquireConnection();
    try {
      held.before();
      try {
        return await this.inTransaction(driver, connection, work);
      } finally {
        held.after();
      }
    } finally {
      await driver.releaseConnection(connection);
    }
  }

  private async inTransaction<T>(
    driver: Driver,
    connection: DatabaseConnection,
    work: (trx: Transaction<Database>) => Promise<T>,
  ): Promise<T> {
    // A fresh Transaction each time: callers key what they learn in a transaction by its object.
    const trx = new Transaction<Database>({
      config: { dialect: this.dialect },
      driver,
      dialect: this.dialect,
      executor: new DefaultQueryExecutor(
        this.compiler,
        this.adapter,
        new SingleConnectionProvider(connection),
        [],
      ),
    });
    this.statements.run(BEGIN);
    try {
      const result = await work(trx);
      this.statements.run(COMMIT);
      return result;
    } catch (error) {
      // After a failed commit SQLite may have ended the transaction itself: nothing left to undo.
      if (this.statements.inTransaction) this.statements.run(ROLLBACK);
      throw error;
    }
  }
}
