/** Group commit: writes that arrive together share one database transaction, each under its own savepoint. */
import { AsyncResource } from "node:async_hooks";
import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import type { Database } from "./schema.js";

/**
 * A job's database work. It runs inside a transaction it shares with other jobs, so it must touch
 * the database only through `trx` and have no effect outside it: a job that lost a lock conflict is
 * run once more, alone.
 */
export type GroupWork<T> = (trx: Transaction<Database>) => Promise<T>;

interface Job {
  work: GroupWork<unknown>;
  /** The caller's async context (AsyncResource.bind would build a deprecation wrapper per job). */
  context: AsyncResource;
  key: string;
  /** Lock conflicts lost so far (each is run once more, alone, up to CONFLICT_RETRIES). */
  conflicts?: number;
  /** Written as a group of its own (see JoinOptions.apart). */
  apart?: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Written once: a group runs these around every job, and Kysely would otherwise build them each time. */
const SAVEPOINT = CompiledQuery.raw("savepoint job");
const RELEASE = CompiledQuery.raw("release savepoint job");
const ROLLBACK_TO = CompiledQuery.raw("rollback to savepoint job");

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * What a job returns when its last statement is on the wire and unanswered (PostgreSQL, decision
 * 178): a group of that job alone sends its commit right behind it (one round trip for both), and
 * the job succeeds only if the statement did. PostgreSQL aborts a transaction at its first failed
 * statement and answers the commit that follows with a rollback, not an error: the statement's own
 * answer, which comes first, says which it was. Anywhere else (a group of several jobs, SQLite,
 * where a failed statement aborts nothing) the group waits for the answer before it goes on.
 */
export class LastStatement {
  private constructor(readonly answered: Promise<unknown>) {
    // Heard by the group, after the commit: not an unhandled rejection meanwhile.
    answered.catch(() => {});
  }

  /**
   * Sends `query` in `trx` now, as one statement on the wire, for the job to return at once (a
   * statement sent after it would be sent behind the commit).
   */
  static send(trx: Transaction<Database>, query: CompiledQuery): LastStatement {
    return new LastStatement(trx.executeQuery(query));
  }

  /** The same statement, failing with what `translate` makes of its error. */
  failingWith(translate: (error: unknown) => unknown): LastStatement {
    return new LastStatement(
      this.answered.catch((error: unknown) => {
        throw translate(error);
      }),
    );
  }
}

/** What a job's caller hears: its work's answer, nothing in place of a LastStatement. */
type Answer<T> = T extends LastStatement ? undefined : T;

/** The answer a job's work gave, once its last statement is answered. */
async function settled(value: unknown): Promise<unknown> {
  if (!(value instanceof LastStatement)) return value;
  await value.answered;
  return undefined;
}

export interface GroupCommitOptions {
  durability?: CommitDurability | undefined;
  /**
   * A job alone in its group that returns a LastStatement has its commit sent behind that
   * statement, unanswered (PostgreSQL with a pipelining driver; see LastStatement).
   */
  pipelinedCommit?: boolean;
  /** The group's own statements run straight on a synchronous connection (see OwnStatements). */
  own?: OwnStatements | undefined;
  /** The group's transaction without Kysely's builders, where the store has durability to manage (file SQLite). */
  transactions?: GroupTransactions | undefined;
}

/**
 * Runs a group's transaction on the store's one connection, as Kysely's `connection()` and
 * `transaction()` would, without their builders (file SQLite, decision 229; see OwnTransactions).
 * `held` runs once the connection is taken and before it is given back.
 */
export interface GroupTransactions {
  run<T>(
    work: (trx: Transaction<Database>) => Promise<T>,
    held: { before: () => void; after: () => void },
  ): Promise<T>;
}

/**
 * Runs one of the group's own statements (its savepoints, and the durability pragmas around its
 * transaction) on the store's one synchronous connection, at once and without Kysely (file SQLite,
 * decision 202). Through Kysely each paid about 10,000 instructions of promise layers (its executor,
 * its connection provider's queue, the driver) for a statement without parameters or rows. The
 * group runs them only while it holds that connection and has no statement of its own in flight:
 * before its transaction, after it, and between two jobs, each of which has had every statement
 * answered before it settled (which the group waits for).
 */
export interface OwnStatements {
  run(query: CompiledQuery): void;
}

/**
 * How a group's commit reaches the disk when the store can do it off the event loop (file SQLite,
 * see WalFlush): `relax` runs on the group's connection before its transaction (commit without
 * syncing), `restore` after it, and `flush()` resolves once the commit is durable. Without it
 * (PostgreSQL) the commit itself is durable when it returns.
 */
export interface CommitDurability {
  relax: CompiledQuery;
  restore: CompiledQuery;
  /** `inline`: nothing else waits for the event loop, so it may wait for the disk itself. */
  flush(inline: boolean): Promise<void>;
}

/** Items one joined job may carry (its statement names them all: far below every driver's limit). */
export const MAX_JOINED = 500;

/** How a joined job is written. */
export interface JoinOptions {
  /** A write nobody waits for (see `run`). */
  lazy?: boolean;
  /**
   * At most this many items, and the job a group of its own, never written with another (decision
   * 216): a burst's requests then go on in turns, one part's commit and sends on their way while
   * the next part is written, where one group held them all through each step in turn.
   */
  apart?: number;
}

interface Joined {
  items: unknown[];
  done: Promise<void>;
}

/** How long a lazy job waits, with the others that come meanwhile, before their group is written. */
export const LAZY_MS = 20;

/** Jobs per transaction: bounds how long one transaction holds its locks and how much one commit writes. */
export const MAX_GROUP = 128;

/**
 * PostgreSQL's deadlock and serialization failures: the job lost a race with another transaction
 * (another instance's group), not a rule; alone in its own transaction it is worth one more try.
 */
const CONFLICTS = new Set(["40P01", "40001"]);

/**
 * Runs of a job alone after lost conflicts: alone it takes only its own locks, in order, but those
 * can still meet another instance's group that holds one and waits for another (a wallet's rolling
 * limit locks the wallet and the address); PostgreSQL then aborts one of the two, and it is tried again.
 */
const CONFLICT_RETRIES = 6;

/**
 * The pause before a lost conflict's next try: random and growing, so the two transactions that
 * met do not meet again at once (tried again at once, under load they lost the same race three
 * times over and the request failed).
 */
const conflictPause = (conflicts: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** Math.min(conflicts, 5)));

function isConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONFLICTS.has(code);
}

/**
 * Every write transaction costs a commit (on SQLite the WAL append of every page it dirtied, the
 * larger share of a small request's database time; on PostgreSQL a round trip and a WAL flush).
 * Jobs queued in the same turn of the event loop, and those that arrive while a group is being
 * written, are committed together. Each job runs under a savepoint, so one that throws (a rolling
 * limit, a nonce the caller got wrong) leaves nothing behind and the others still commit. A job's
 * promise settles only after the commit: what it returns is durable. Jobs run in the order of their
 * lock keys (stable, so one key keeps its arrival order): every group of every instance takes the
 * same rows in the same order, so groups cannot deadlock one another.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** Groups committed whose callers still wait for the flush (see CommitDurability). */
  private flushing = 0;
  private readonly drained = new Set<() => void>();
  /** Pending start of a group for lazy jobs only (see `run`). */
  private lazyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Joined jobs not yet started, by their join key (see `join`). */
  private readonly joined = new Map<string, Joined>();
  /** Lazy jobs waiting for their own group (see `run`). */
  private lazyQueue: Job[] = [];
  /** Whether a group of lazy jobs is being written (one at a time). */
  private lazyInFlight = false;

  private readonly durability: CommitDurability | undefined;
  /** Whether nothing outside the group commit needs the event loop now (see `flushInlineWhen`). */
  private loopFree: () => boolean = () => false;
  private readonly pipelinedCommit: boolean;
  private readonly ownStatements: OwnStatements | undefined;
  private readonly transactions: GroupTransactions | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    /** Groups written at once (1 on SQLite, whose single connection serialises them anyway). */
    private readonly concurrency: number,
    options: GroupCommitOptions = {},
  ) {
    this.durability = options.durability;
    this.pipelinedCommit = options.pipelinedCommit ?? false;
    this.ownStatements = options.own;
    this.transactions = options.transactions;
  }

  /**
   * Runs `work` in the next group; `key` names the row it locks first (e.g. a nonce ledger row).
   * A `lazy` job (a write nobody waits for, such as a sent transaction's state) starts no group
   * at once and never rides with another: the lazy jobs of LAZY_MS are written together, as a
   * group apart, one such group at a time (decision 210). Riding with a request's group added its
   * savepoint, its statement and its pages to that request's commit, at one connection every one.
   */
  run<T>(work: GroupWork<T>, key = "", lazy = false): Promise<Answer<T>> {
    return this.enqueue(work, key, lazy, false);
  }

  private enqueue<T>(work: GroupWork<T>, key: string, lazy: boolean, apart: boolean): Promise<Answer<T>> {
    return new Promise<Answer<T>>((resolve, reject) => {
      // The job runs from the group's turn, not its caller's: it keeps its caller's async context
      // (its log bindings); what the job needs of its request it takes as arguments.
      const job: Job = {
        work,
        context: new AsyncResource("chaingate.group-commit"),
        key,
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      if (apart) job.apart = true;
      if (lazy) {
        this.lazyQueue.push(job);
        this.scheduleLater();
        return;
      }
      this.queue.push(job);
      this.schedule();
    });
  }

  /** Writes the lazy jobs waiting once LAZY_MS pass, unless their group is being written (it then calls again). */
  private scheduleLater(): void {
    if (this.lazyTimer !== undefined || this.lazyInFlight || this.lazyQueue.length === 0) return;
    this.lazyTimer = setTimeout(() => {
      this.lazyTimer = undefined;
      this.writeLazy();
    }, LAZY_MS);
  }

  /** Writes the lazy jobs waiting as a group of their own. */
  private writeLazy(): void {
    if (this.lazyInFlight || this.lazyQueue.length === 0) return;
    this.lazyInFlight = true;
    const jobs = this.lazyQueue.splice(0, MAX_GROUP);
    void this.write(jobs).finally(() => {
      this.lazyInFlight = false;
      this.settleDrain();
      this.scheduleLater();
    });
  }

  /**
   * Runs `work` over `item` and every other item joined under `joinKey` until the job starts: one
   * job (and one statement, for a caller that writes them as one) for what changes the same way
   * in one turn, not one each. Each caller resolves once the commit holding its item is durable.
   * From its start, later items go to a new job (this one may be run again, alone, after a conflict).
   */
  join<T>(
    joinKey: string,
    item: T,
    /** What it answers is not heard (a LastStatement it returns is, see `run`). */
    work: (trx: Transaction<Database>, items: T[]) => Promise<unknown>,
    key = "",
    options: JoinOptions = {},
  ): Promise<void> {
    const open = this.joined.get(joinKey);
    if (open && open.items.length < (options.apart ?? MAX_JOINED)) {
      open.items.push(item);
      return open.done;
    }
    const batch: Joined = { items: [item], done: Promise.resolve() };
    this.joined.set(joinKey, batch);
    const close = () => {
      if (this.joined.get(joinKey) === batch) this.joined.delete(joinKey);
    };
    batch.done = this.enqueue(
      async (trx) => {
        close();
        return work(trx, batch.items as T[]);
      },
      key,
      options.lazy ?? false,
      options.apart !== undefined,
    ).then(() => undefined);
    // A group lost before this job started (its transaction could not begin) settles it without
    // running it: later items must not join a batch whose answer is already given.
    batch.done.then(close, close);
    return batch.done;
  }

  /**
   * Lets a group with nothing queued behind it wait for its flush on the event loop when `free`
   * says nothing else needs the loop (the HTTP server: no request in flight but the one waiting);
   * otherwise the flush runs on the thread pool while the loop serves the rest (decision 189).
   */
  flushInlineWhen(free: () => boolean): void {
    this.loopFree = free;
  }

  /** Resolves once every job queued so far has settled (shutdown). */
  drain(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    // Lazy jobs are not left to their timer when the store is closing.
    if (this.lazyTimer !== undefined) {
      clearTimeout(this.lazyTimer);
      this.lazyTimer = undefined;
      this.writeLazy();
    }
    return new Promise((resolve) => this.drained.add(resolve));
  }

  private idle(): boolean {
    return (
      this.queue.length === 0 &&
      this.inFlight === 0 &&
      this.flushing === 0 &&
      this.lazyQueue.length === 0 &&
      !this.lazyInFlight
    );
  }

  private settleDrain(): void {
    if (!this.idle()) return;
    for (const resolve of this.drained) resolve();
    this.drained.clear();
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.concurrency || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate runs after the poll phase: every request read in this turn has queued its job.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.concurrency && this.queue.length > 0) {
        const jobs = this.nextGroup();
        this.inFlight++;
        void this.write(jobs).finally(() => {
          this.inFlight--;
          this.settleDrain();
          this.schedule();
        });
      }
    });
  }

  /** The jobs of the next group, in arrival order: a job written apart alone, else up to MAX_GROUP others. */
  private nextGroup(): Job[] {
    if (this.queue[0]!.apart) return this.queue.splice(0, 1);
    let count = 1;
    while (count < MAX_GROUP && count < this.queue.length && !this.queue[count]!.apart) count++;
    return this.queue.splice(0, count);
  }

  /**
   * Commits the group; once the commit is durable (at once, or after the flush, which the next
   * group does not wait for) each job settles.
   */
  private async write(jobs: Job[]): Promise<void> {
    if (jobs.length === 1) {
      // Alone: a plain transaction, no savepoint to pay for.
      const job = jobs[0]!;
      const outcome = await this.committed(
        (trx) => job.context.runInAsyncScope(job.work, null, trx),
        this.pipelinedCommit,
      );
      if (!outcome.ok && isConflict(outcome.error) && (job.conflicts ?? 0) < CONFLICT_RETRIES) {
        job.conflicts = (job.conflicts ?? 0) + 1;
        await conflictPause(job.conflicts);
        return this.write([job]);
      }
      this.settle([job], outcome.ok ? [outcome] : [], outcome.ok ? undefined : outcome.error);
      return;
    }
    jobs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const outcomes: Outcome[] = [];
    const group = await this.committed(async (trx) => {
      for (const [i, job] of jobs.entries()) {
        // The last job's savepoint is left for the commit to release with the transaction: a
        // statement (on PostgreSQL a round trip) fewer a group.
        const last = i === jobs.length - 1;
        await this.own(trx, SAVEPOINT);
        try {
          const value = await settled(await job.context.runInAsyncScope(job.work, null, trx));
          if (!last) await this.own(trx, RELEASE);
          outcomes.push({ ok: true, value });
        } catch (error) {
          // A failure of the connection itself fails this statement too, and with it the group.
          await this.own(trx, ROLLBACK_TO);
          if (!last) await this.own(trx, RELEASE);
          outcomes.push({ ok: false, error });
        }
      }
    });
    // The transaction as a whole is lost (connection gone, commit refused): nothing any job wrote
    // was kept, and each caller hears why, as it would from its own transaction.
    this.settle(jobs, outcomes, group.ok ? undefined : group.error);
  }

  /** One of the group's own statements: straight on the connection where it is synchronous, else through `on`. */
  private own(on: Kysely<Database>, query: CompiledQuery): Promise<unknown> | undefined {
    if (!this.ownStatements) return on.executeQuery(query);
    this.ownStatements.run(query);
    return undefined;
  }

  /**
   * Runs `work` in a transaction and commits it (without waiting for the disk where `durability`
   * flushes later). With `pipelined`, a LastStatement the work returns is answered after the
   * commit was sent, and decides the outcome; otherwise it is answered before the commit.
   */
  private async committed(
    work: (trx: Transaction<Database>) => Promise<unknown>,
    pipelined = false,
  ): Promise<Outcome> {
    const { durability } = this;
    try {
      if (pipelined && !durability)
        return { ok: true, value: await settled(await this.db.transaction().execute(work)) };
      const answered = async (trx: Transaction<Database>) => settled(await work(trx));
      if (!durability) return { ok: true, value: await this.db.transaction().execute(answered) };
      const own = this.ownStatements;
      if (this.transactions && own) {
        // The same steps as below, on the same connection, without Kysely's builders (decision 229).
        const value = await this.transactions.run(answered, {
          before: () => own.run(durability.relax),
          after: () => own.run(durability.restore),
        });
        return { ok: true, value };
      }
      // One connection held throughout, so no other transaction commits while syncing is relaxed.
      return await this.db.connection().execute(async (connection) => {
        await this.own(connection, durability.relax);
        try {
          return { ok: true, value: await connection.transaction().execute(answered) };
        } finally {
          // A pragma that only sets a flag: it fails only with the connection, and then nothing
          // more commits on it in either mode.
          await this.own(connection, durability.restore);
        }
      });
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * Settles each job with its outcome once the commit is durable; jobs that lost a lock conflict
   * run once more, alone. `lost` fails them all (the transaction did not commit).
   */
  private settle(jobs: Job[], outcomes: Outcome[], lost: unknown): void {
    const finish = async () => {
      if (lost !== undefined) {
        for (const job of jobs) job.reject(lost);
        return;
      }
      try {
        // Inline only when the sync holds up nobody: no group waits, nor any other request (decision 189).
        await this.durability?.flush(this.queue.length === 0 && this.loopFree());
      } catch (error) {
        for (const job of jobs) job.reject(error);
        return;
      }
      const again: Job[] = [];
      jobs.forEach((job, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) job.resolve(outcome.value);
        else if (isConflict(outcome.error) && (job.conflicts ?? 0) < CONFLICT_RETRIES) {
          job.conflicts = (job.conflicts ?? 0) + 1;
          again.push(job);
        } else job.reject(outcome.error);
      });
      for (const job of again) {
        await conflictPause(job.conflicts!);
        await this.write([job]);
      }
    };
    this.flushing++;
    void finish().finally(() => {
      this.flushing--;
      this.settleDrain();
    });
  }
}
