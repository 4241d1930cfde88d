/** The webhook outbox: an event and its deliveries, written in the database transaction of the change it reports. */
import type { CompiledQuery, Kysely } from "kysely";
import { toJsonText } from "../store/json-text.js";
import { PreparedQuery } from "../store/prepared-query.js";
import { rowId } from "../store/row-id.js";
import type { Database, WebhookDeliveriesTable } from "../store/schema.js";
import { type EventType, matchesAny } from "./event-types.js";

export interface OutboxEvent {
  /** The tenant whose webhooks hear it (null: keyless mode's one user). */
  owner: string | null;
  type: EventType;
  data: Record<string, unknown>;
  /** Events with one key (a transaction's id, a transport's id) reach each endpoint in the order written. */
  orderKey: string;
  /** Also for the webhooks of admin keys: something the operator must act on (a disputed transport). */
  operators?: boolean;
  /** The trace of the change it reports (a transaction's), continued by its deliveries. */
  traceParent?: string | null;
}

/**
 * Records `event` for every webhook of its owner that subscribed to its type; nothing when none
 * did. Call it with the transaction that makes the change, so that the change and its event are
 * committed (or lost) together.
 */
export async function recordEvent(db: Kysely<Database>, event: OutboxEvent, now = Date.now()): Promise<void> {
  let hooks = await webhooksOf(db, event.owner);
  if (event.operators === true && event.owner !== null) {
    // A copy: the list read for the owner is shared by the group commit's other jobs.
    hooks = [...hooks];
    const seen = new Set(hooks.map((h) => h.id));
    for (const hook of await adminWebhooks(db)) if (!seen.has(hook.id)) hooks.push(hook);
  }
  const wanted = hooks.filter((h) => matchesAny(h.events, event.type));
  if (wanted.length === 0) return;
  // The caller's transaction holds the row that changed (the transaction or transport), so two
  // changes of one key never take the same number.
  const last = await db
    .selectFrom("webhook_events")
    .select((eb) => eb.fn.max("order_seq").as("seq"))
    .where("order_key", "=", event.orderKey)
    .executeTakeFirst();
  const seq = Number(last?.seq ?? 0) + 1;
  const id = rowId(now);
  await db
    .insertInto("webhook_events")
    .values({
      id,
      owner: event.owner,
      type: event.type,
      data: toJsonText(event.data),
      order_key: event.orderKey,
      order_seq: seq,
      created_at: now,
      trace_parent: event.traceParent ?? null,
    })
    .execute();
  await db
    .insertInto("webhook_deliveries")
    .values(wanted.map((hook) => newDelivery(hook.id, id, event.orderKey, seq, now)))
    .execute();
}

type Hooks = { id: string; events: string[] }[];

/**
 * Whether `owner` has any webhook, read as `recordEvent` reads it (once per database transaction):
 * a writer of many events (a burst's moves) builds none when no one could hear them, as most owners
 * have no endpoint. Events for the operators' webhooks (`operators`) are not covered: ask
 * `recordEvent`.
 */
export async function hasWebhooks(db: Kysely<Database>, owner: string | null): Promise<boolean> {
  return (await webhooksOf(db, owner)).length > 0;
}

/**
 * The webhooks read by each transaction, per owner. A group commit (see GroupCommit) records the
 * events of many requests in one transaction: the endpoints are read once for all of them, as if
 * every event had been recorded at the group's first read. Outside a transaction nothing is kept.
 */
const hooksRead = new WeakMap<object, Map<string | null, Promise<Hooks>>>();

/** The webhooks of keyless mode's one user, and of one key (every group commit reads one: compiled once, see PreparedQuery). */
const OF_NO_OWNER = new PreparedQuery((db) =>
  db.selectFrom("webhooks").select(["id", "events"]).where("owner", "is", null),
);
const OF_OWNER = new PreparedQuery((db, slot) =>
  db.selectFrom("webhooks").select(["id", "events"]).where("owner", "=", slot<string>(0)),
);

type HookRow = { id: string; events: string };

const ofOwner = (db: Kysely<Database>, owner: string | null) =>
  owner === null ? OF_NO_OWNER.query(db, []) : OF_OWNER.query(db, [owner]);

const toHooks = (rows: readonly HookRow[]): Hooks =>
  rows.map((h) => ({ id: h.id, events: JSON.parse(h.events) as string[] }));

function readIn(db: Kysely<Database>): Map<string | null, Promise<Hooks>> {
  let byOwner = hooksRead.get(db);
  if (!byOwner) {
    byOwner = new Map();
    hooksRead.set(db, byOwner);
  }
  return byOwner;
}

function webhooksOf(db: Kysely<Database>, owner: string | null): Promise<Hooks> {
  const read = async () => toHooks((await db.executeQuery(ofOwner(db, owner))).rows);
  if (!db.isTransaction) return read();
  const byOwner = readIn(db);
  const known = byOwner.get(owner);
  if (known) return known;
  const hooks = read();
  byOwner.set(owner, hooks);
  // A failed read is not an answer for the group's other jobs.
  hooks.catch(() => byOwner.delete(owner));
  return hooks;
}

/**
 * The read of `owner`'s webhooks that `recordEvent` would make in transaction `trx`, for a caller
 * to run inside a statement of its own (one round trip fewer, see insertRowsTogether) and hand back
 * with `webhooksWereRead`; undefined when this transaction has read them already.
 */
export function webhooksRead(
  trx: Kysely<Database>,
  owner: string | null,
): CompiledQuery<HookRow> | undefined {
  return !trx.isTransaction || webhooksKnown(trx, owner) ? undefined : ofOwner(trx, owner);
}

/** Whether transaction `trx` has read `owner`'s webhooks already (`hasWebhooks` then runs no statement). */
export function webhooksKnown(trx: Kysely<Database>, owner: string | null): boolean {
  return trx.isTransaction && readIn(trx).has(owner);
}

/** What a caller's statement read with `webhooksRead`: the transaction's answer from now on. */
export function webhooksWereRead(
  trx: Kysely<Database>,
  owner: string | null,
  rows: readonly HookRow[],
): void {
  if (trx.isTransaction) readIn(trx).set(owner, Promise.resolve(toHooks(rows)));
}

/** The webhooks of live admin keys (rare events only: read each time, not kept). */
async function adminWebhooks(db: Kysely<Database>): Promise<Hooks> {
  const rows = await db
    .selectFrom("webhooks")
    .innerJoin("api_keys", "api_keys.id", "webhooks.owner")
    .select(["webhooks.id", "webhooks.events"])
    .where("api_keys.role", "=", "admin")
    .where("api_keys.revoked_at", "is", null)
    .execute();
  return rows.map((h) => ({ id: h.id, events: JSON.parse(h.events) as string[] }));
}

/** A delivery of one event to one endpoint, due now (also a redelivery by hand). */
export function newDelivery(
  webhookId: string,
  eventId: string,
  orderKey: string,
  orderSeq: number,
  now: number,
): WebhookDeliveriesTable {
  return {
    id: rowId(now),
    webhook_id: webhookId,
    event_id: eventId,
    order_key: orderKey,
    order_seq: orderSeq,
    state: "pending",
    attempts: 0,
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    last_status: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  };
}
