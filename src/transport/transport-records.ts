/** The transports table as the relayer works it: what is due, leases between instances, and state changes. */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Store } from "../store/database.js";
import { fixedLimit } from "../store/fixed-limit.js";
import type { TransportState, TransportsTable } from "../store/schema.js";
import type { EventType } from "../webhooks/event-types.js";
import { recordEvent } from "../webhooks/outbox.js";
import { transportEvent } from "./transport-event.js";
import { newTransportRow, type SentTransport } from "./transport-row.js";

/** The event a move into each state announces (delivered is announced by `delivered`). */
const STATE_EVENTS = {
  failed: "transport.failed",
  delivering: "transport.delivering",
  awaiting_quorum: "transport.awaiting_quorum",
  reorged: "transport.reorged",
  queued: "transport.queued",
} as const satisfies Partial<Record<TransportState, EventType>>;

/** Held because the source chain's nodes cannot be trusted on it: the operator must hear of it too. */
const OPERATOR_EVENTS: ReadonlySet<EventType> = new Set(["transport.awaiting_quorum", "transport.reorged"]);

/** Transports one pass takes of each kind of work. */
const BATCH = 20;
const SOURCE_BATCH = 100;

export class TransportRecords {
  /** This process, as lease owner: two instances never work on one transport at once. */
  private readonly instance = randomUUID();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly leaseMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * Records a transport seen on its source chain (once by id; the event's block and body win until
   * a quorum has confirmed them: after that a scan, one upstream's word, changes nothing).
   */
  async recordSent(sent: SentTransport & { body: string; source_block: number }): Promise<void> {
    const now = this.now();
    await this.store.db
      .insertInto("transports")
      .values(newTransportRow(sent, now))
      .onConflict((oc) =>
        oc
          .column("id")
          .doUpdateSet({
            body: sent.body,
            source_block: sent.source_block,
            source_tx_hash: sent.source_tx_hash,
            updated_at: now,
          })
          .where("transports.source_block_hash", "is", null),
      )
      .execute();
  }

  /** Sent through the API and not yet seen on the source chain: their source transaction may have failed. */
  awaitingSource(): Promise<{ id: string; source_tx_hash: string | null }[]> {
    return this.store.db
      .selectFrom("transports")
      .select(["id", "source_tx_hash"])
      .where("state", "=", "sent")
      .where("source_block", "is", null)
      .where("source_tx_hash", "is not", null)
      .limit(fixedLimit(SOURCE_BATCH))
      .execute();
  }

  /** Transports waiting for a delivery (seen on the source chain) or a refund, and not leased, oldest first. */
  due(work: "deliver" | "refund"): Promise<TransportsTable[]> {
    const now = this.now();
    return this.store.db
      .selectFrom("transports")
      .selectAll()
      .$if(work === "deliver", (q) =>
        q
          .where("state", "in", ["sent", "awaiting_quorum", "reorged", "queued", "delivering"])
          .where("source_block", "is not", null)
          // A held transport waits for its next look (backoff, release time) without taking a batch slot.
          .where((eb) => eb.or([eb("next_check_at", "is", null), eb("next_check_at", "<=", now)])),
      )
      .$if(work === "refund", (q) => q.where("state", "=", "failed").where("refund_state", "=", "pending"))
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
      .orderBy("created_at")
      .limit(fixedLimit(BATCH))
      .execute();
  }

  /** Runs `work` on a transport only while this instance holds its lease; a crashed instance's lease runs out. */
  async underLease(id: string, work: () => Promise<void>, onFault: (error: unknown) => Promise<void>) {
    if (!(await this.claim(id))) return;
    // Renewed while the work runs (a delivery may wait for its receipt): a short lease is then enough,
    // and an instance killed mid-work loses it within one lease, not after a long one.
    const renewal = setInterval(() => {
      void this.store.db
        .updateTable("transports")
        .set({ lease_until: this.now() + this.leaseMs })
        .where("id", "=", id)
        .where("lease_owner", "=", this.instance)
        .execute()
        .catch(() => {
          // A missed renewal is retried at the next beat; the lease is three beats long.
        });
    }, this.leaseMs / 3);
    renewal.unref();
    try {
      await work();
    } catch (error) {
      await onFault(error);
    } finally {
      clearInterval(renewal);
      await this.store.db
        .updateTable("transports")
        .set({ lease_owner: null, lease_until: null })
        .where("id", "=", id)
        .where("lease_owner", "=", this.instance)
        .execute();
    }
  }

  private async claim(id: string): Promise<boolean> {
    const now = this.now();
    const result = await this.store.db
      .updateTable("transports")
      .set({ lease_owner: this.instance, lease_until: now + this.leaseMs })
      .where("id", "=", id)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async delivered(id: string, txHash: string | null): Promise<void> {
    const now = this.now();
    await this.store.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("transports")
        .set({
          state: "delivered",
          destination_tx_hash: txHash,
          delivered_at: now,
          updated_at: now,
          error: null,
          refund_state: null,
        })
        .where("id", "=", id)
        .where("state", "!=", "delivered")
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) await this.announce(trx, id, "transport.delivered", now);
    });
    this.logger.info({ transport: id, tx: txHash }, "transport delivered");
  }

  /** The transport as it now is, to the webhooks of its owner (in the transaction that changed it). */
  private async announce(trx: Parameters<typeof recordEvent>[0], id: string, type: EventType, now: number) {
    const row = await trx.selectFrom("transports").selectAll().where("id", "=", id).executeTakeFirst();
    if (row)
      await recordEvent(trx, { ...transportEvent(row, type), operators: OPERATOR_EVENTS.has(type) }, now);
  }

  /** Failed for good; token transports refused by the destination are then refunded (`refund` "pending"). */
  async fail(id: string, reason: string, refund: "pending" | null = null, revertData: string | null = null) {
    this.logger.warn({ transport: id, reason }, "transport failed");
    // The raw revert data is kept whole (bounded by the node's answer limit) for whoever decodes it better.
    await this.note(id, {
      state: "failed",
      error: reason.slice(0, 1000),
      revert_data: revertData,
      refund_state: refund,
    });
  }

  async note(id: string, changes: Partial<TransportsTable>): Promise<void> {
    const now = this.now();
    const type: EventType | undefined =
      changes.state !== undefined && changes.state in STATE_EVENTS
        ? STATE_EVENTS[changes.state as keyof typeof STATE_EVENTS]
        : changes.refund_state === "done"
          ? "transport.refunded"
          : undefined;
    const update = (db: Parameters<typeof recordEvent>[0]) =>
      db
        .updateTable("transports")
        .set({ ...changes, updated_at: now })
        .where("id", "=", id)
        .execute();
    if (type === undefined) {
      await update(this.store.db);
      return;
    }
    await this.store.db.transaction().execute(async (trx) => {
      const before = await trx
        .selectFrom("transports")
        .select(["state", "refund_state"])
        .where("id", "=", id)
        .executeTakeFirst();
      await update(trx);
      // A state is announced once: a repeated note (another delivery attempt) is no change.
      const changed =
        before !== undefined &&
        (type === "transport.refunded" ? before.refund_state !== "done" : before.state !== changes.state);
      if (changed) await this.announce(trx, id, type, now);
    });
  }
}
