/** Events every instance sharing the store must hear at once (locks, heads): PostgreSQL's LISTEN/NOTIFY, or in process on SQLite. */
import pg from "pg";

/** What instances tell each other; small, and each handler is idempotent (every instance hears its own too). */
export type ClusterEvent =
  /** An unlock ended early (personal_lockAccount, a lock route): no instance may sign with it any more. */
  | { kind: "lock"; owner: string | null; address: string }
  /** Every unlock of a wallet ends (its password was being guessed: the wallet locked itself). */
  | { kind: "wallet-lock"; walletId: string }
  /** An instance served a new head for a chain: no instance answers below it. */
  | { kind: "head"; chainId: number; head: number }
  /** An API key was created or revoked (by any instance, or the CLI): every key ring reads the keys again. */
  | { kind: "keys" };

type Handler<K extends ClusterEvent["kind"]> = (event: Extract<ClusterEvent, { kind: K }>) => void;

export interface ClusterBus {
  /** True where other instances may share the store (PostgreSQL): what is published reaches them. */
  readonly shared: boolean;
  publish(event: ClusterEvent): Promise<void>;
  on<K extends ClusterEvent["kind"]>(kind: K, handler: Handler<K>): () => void;
  close(): Promise<void>;
}

const CHANNEL = "chaingate_events";

class Handlers {
  private readonly byKind = new Map<string, Set<(event: ClusterEvent) => void>>();

  on<K extends ClusterEvent["kind"]>(kind: K, handler: Handler<K>): () => void {
    let set = this.byKind.get(kind);
    if (!set) {
      set = new Set();
      this.byKind.set(kind, set);
    }
    const wrapped = handler as (event: ClusterEvent) => void;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  deliver(event: ClusterEvent): void {
    for (const handler of this.byKind.get(event.kind) ?? []) {
      try {
        handler(event);
      } catch {
        // One handler's failure is not the others' (nor the bus's).
      }
    }
  }
}

/** One instance (SQLite): events go to this process's handlers, after the current turn. */
export class LocalBus implements ClusterBus {
  readonly shared = false;
  private readonly handlers = new Handlers();

  async publish(event: ClusterEvent): Promise<void> {
    queueMicrotask(() => this.handlers.deliver(event));
  }

  on<K extends ClusterEvent["kind"]>(kind: K, handler: Handler<K>): () => void {
    return this.handlers.on(kind, handler);
  }

  async close(): Promise<void> {}
}

/**
 * Every instance on one PostgreSQL: NOTIFY on a channel each instance LISTENs to on a connection of
 * its own (a pooled one may be handed to a query at any time). A connection lost is opened again
 * with back-off; what was published meanwhile is missed, so every user of the bus also re-reads the
 * store on a short period (the bus makes changes immediate, the re-read makes them certain).
 */
export class PostgresBus implements ClusterBus {
  readonly shared = true;
  private readonly handlers = new Handlers();
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly publishWith: (payload: string) => Promise<void>,
    private readonly onFault: (error: Error) => void,
  ) {}

  async start(): Promise<void> {
    await this.connect(0);
  }

  private async connect(attempt: number): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    client.on("error", (error) => {
      this.onFault(error);
      if (this.client === client) {
        this.client = undefined;
        this.again(attempt + 1);
      }
    });
    client.on("notification", (message) => {
      if (message.channel !== CHANNEL || message.payload === undefined) return;
      try {
        this.handlers.deliver(JSON.parse(message.payload) as ClusterEvent);
      } catch {
        // A payload that is not ours (another program on the channel) is ignored.
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.client = client;
    } catch (error) {
      this.onFault(error as Error);
      await client.end().catch(() => {});
      if (attempt === 0) throw error;
      this.again(attempt + 1);
    }
  }

  private again(attempt: number): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(attempt), Math.min(250 * 2 ** attempt, 10_000));
    this.retry.unref();
  }

  async publish(event: ClusterEvent): Promise<void> {
    await this.publishWith(JSON.stringify(event));
  }

  on<K extends ClusterEvent["kind"]>(kind: K, handler: Handler<K>): () => void {
    return this.handlers.on(kind, handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}

export { CHANNEL as CLUSTER_CHANNEL };
