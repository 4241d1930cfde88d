/** A tenant's webhook endpoints and their delivery log: registered, listed, removed, redelivered. */
import { randomUUID } from "node:crypto";
import type { WebhookSettings } from "../config/config.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { newestFirstPage } from "../store/cursor-page.js";
import type { Store } from "../store/database.js";
import type { DeliveryState } from "../store/schema.js";
import { newDelivery } from "./outbox.js";
import { newSecret } from "./signature.js";
import { checkWebhookUrl } from "./url-guard.js";

export interface WebhookRecord {
  id: string;
  url: string;
  events: string[];
  created_at: string;
}

export interface DeliveryRecord {
  id: string;
  event_id: string;
  type: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

const notFound = (what: string) =>
  new ChaingateError(`no ${what} with that id for this key`, { code: "WEBHOOK_NOT_FOUND" });

export class WebhookStore {
  constructor(
    private readonly store: Store,
    private readonly settings: WebhookSettings,
  ) {}

  private owned(owner: string | null) {
    return this.store.db
      .selectFrom("webhooks")
      .selectAll()
      .$if(owner === null, (q) => q.where("owner", "is", null))
      .$if(owner !== null, (q) => q.where("owner", "=", owner));
  }

  async create(
    owner: string | null,
    url: string,
    events: string[],
  ): Promise<WebhookRecord & { secret: string }> {
    const checked = checkWebhookUrl(url, this.settings.allowPrivate);
    const held = await this.owned(owner).execute();
    if (held.length >= this.settings.perKey) {
      throw new ChaingateError(`this key has ${held.length} webhooks, the most it may hold`, {
        code: "WEBHOOK_LIMIT",
        data: { limit: this.settings.perKey },
      });
    }
    const row = {
      id: randomUUID(),
      owner,
      url: checked.toString(),
      events: JSON.stringify([...new Set(events)]),
      secret: newSecret(),
      created_at: Date.now(),
    };
    await this.store.db.insertInto("webhooks").values(row).execute();
    return {
      id: row.id,
      url: row.url,
      events: JSON.parse(row.events),
      secret: row.secret,
      created_at: iso(row.created_at)!,
    };
  }

  async list(owner: string | null): Promise<WebhookRecord[]> {
    const rows = await this.owned(owner).orderBy("created_at").execute();
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      events: JSON.parse(r.events),
      created_at: iso(r.created_at)!,
    }));
  }

  async get(owner: string | null, id: string): Promise<WebhookRecord> {
    const row = await this.owned(owner).where("id", "=", id).executeTakeFirst();
    if (!row) throw notFound("webhook");
    return { id: row.id, url: row.url, events: JSON.parse(row.events), created_at: iso(row.created_at)! };
  }

  /** Removes the endpoint; deliveries still pending for it are dropped with it. */
  async delete(owner: string | null, id: string): Promise<void> {
    await this.get(owner, id);
    await this.store.db.transaction().execute(async (trx) => {
      await trx.deleteFrom("webhook_deliveries").where("webhook_id", "=", id).execute();
      await trx.deleteFrom("webhooks").where("id", "=", id).execute();
    });
  }

  async deliveries(
    owner: string | null,
    id: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ deliveries: DeliveryRecord[]; next_cursor: string | null }> {
    await this.get(owner, id);
    // One table only: the shared pager orders by unqualified created_at and id.
    const query = this.store.db
      .selectFrom("webhook_deliveries")
      .select([
        "id",
        "event_id",
        "state",
        "attempts",
        "next_attempt_at",
        "last_status",
        "last_error",
        "created_at",
        "delivered_at",
      ])
      .where("webhook_id", "=", id);
    const { page, next } = await newestFirstPage(query, cursor, limit);
    const ids = [...new Set(page.map((d) => d.event_id))];
    const types = new Map(
      ids.length === 0
        ? []
        : (
            await this.store.db
              .selectFrom("webhook_events")
              .select(["id", "type"])
              .where("id", "in", ids)
              .execute()
          ).map((e) => [e.id, e.type]),
    );
    return {
      deliveries: page.map((d) => ({
        ...d,
        type: types.get(d.event_id) ?? "",
        next_attempt_at: d.state === "pending" ? iso(d.next_attempt_at) : null,
        created_at: iso(d.created_at)!,
        delivered_at: iso(d.delivered_at),
      })),
      next_cursor: next,
    };
  }

  /** Sends an event again: a new delivery of the same event (same event id), due at once. */
  async redeliver(owner: string | null, id: string, deliveryId: string): Promise<DeliveryRecord> {
    await this.get(owner, id);
    const old = await this.store.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("id", "=", deliveryId)
      .where("webhook_id", "=", id)
      .executeTakeFirst();
    if (!old) throw notFound("delivery");
    const now = Date.now();
    const fresh = newDelivery(id, old.event_id, old.order_key, old.order_seq, now);
    await this.store.db.insertInto("webhook_deliveries").values(fresh).execute();
    const event = await this.store.db
      .selectFrom("webhook_events")
      .select("type")
      .where("id", "=", old.event_id)
      .executeTakeFirstOrThrow();
    return {
      id: fresh.id,
      event_id: fresh.event_id,
      type: event.type,
      state: fresh.state,
      attempts: 0,
      next_attempt_at: iso(now),
      last_status: null,
      last_error: null,
      created_at: iso(now)!,
      delivered_at: null,
    };
  }
}
