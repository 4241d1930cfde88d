/** Delivers the outbox: at least once, in order per key, retried with back-off and jitter, safe with several instances (leases). */
import { randomUUID } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { Logger } from "pino";
import { Agent, request } from "undici";
import type { WebhookSettings } from "../config/config.js";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { Store } from "../store/database.js";
import { fixedLimit } from "../store/fixed-limit.js";
import { failed, inStoredTrace, type Span, traceHeaders } from "../tracing/spans.js";
import { failureClass, NOT_PUBLIC } from "./failure-class.js";
import { SIGNATURE_HEADER, signatureHeader } from "./signature.js";
import { isPrivateAddress } from "./url-guard.js";

/**
 * Deliveries in flight at once: in all, per endpoint and per tenant. A pass claims only what fits,
 * and does not wait for what it started, so a receiver that hangs holds its own slots for up to
 * --webhook-timeout-ms and nobody else's.
 */
const IN_FLIGHT = 32;
const PER_ENDPOINT = 4;
const PER_TENANT = 8;
const MAX_DELAY_MS = 3_600_000;
/** Passes run back to back while they find work, up to this many per tick. */
const PASSES_PER_TICK = 20;

export interface WebhookSenderOptions {
  store: Store;
  logger: Logger;
  settings: WebhookSettings;
  now?: () => number;
  random?: () => number;
}

interface Due {
  id: string;
  webhook_id: string;
  owner: string | null;
  attempts: number;
  created_at: number;
  url: string;
  secret: string;
  event_id: string;
  type: string;
  data: string;
  event_created_at: number;
  trace_parent: string | null;
}

/** The wait before attempt `attempts + 1`: doubling from the base, capped at an hour, with jitter (half to all of it). */
export function retryDelay(attempts: number, baseMs: number, random: () => number): number {
  const full = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(full * (0.5 + random() * 0.5));
}

/** A DNS lookup that refuses private answers, so a public name cannot be pointed at chaingate's own network. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 4);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) {
      const refusal: NodeJS.ErrnoException = new Error(
        `${hostname} resolves to ${bad.address}, a private address`,
      );
      refusal.code = NOT_PUBLIC;
      return callback(refusal, "", 4);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
};

/** A claimed delivery's lease, renewed while it is sent: what a killed instance's deliveries wait before another sends them. */
export const DELIVERY_LEASE_MS = 4_500;

export class WebhookSender {
  private readonly instance = randomUUID();
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly agent: Agent;
  private readonly loop: BackgroundLoop;
  private readonly aborts = new AbortController();
  /** Deliveries started and not yet settled, and how many each endpoint and tenant has of them. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly byEndpoint = new Map<string, number>();
  private readonly byTenant = new Map<string | null, number>();

  constructor(private readonly options: WebhookSenderOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.loop = new BackgroundLoop({
      name: "webhook pass",
      everyMs: options.settings.intervalMs,
      pass: () => this.tick(),
      logger: options.logger,
    });
    this.agent = new Agent({
      ...(options.settings.allowPrivate ? {} : { connect: { lookup: guardedLookup } }),
      headersTimeout: options.settings.timeoutMs,
      bodyTimeout: options.settings.timeoutMs,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A settled delivery may let the next event of its key go: look again now, not after the interval. */
  private kick(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    this.aborts.abort();
    await this.loop.stop();
    await Promise.all(this.inFlight);
    await this.agent.close();
  }

  async tick(): Promise<void> {
    for (let i = 0; i < PASSES_PER_TICK && !this.aborts.signal.aborted; i++) {
      if ((await this.pass()) === 0) return;
    }
  }

  /** Claims what is due and sends it; answers how many deliveries were attempted. */
  async pass(): Promise<number> {
    const now = this.now();
    const db = this.options.store.db;
    // The common case, nothing due, costs one index read (not the ordering query below).
    const any = await db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("state", "=", "pending")
      .where("next_attempt_at", "<=", now)
      .limit(fixedLimit(1))
      .executeTakeFirst();
    if (!any) return 0;
    const free = IN_FLIGHT - this.inFlight.size;
    if (free <= 0) return 0;
    const due = await this.dueNow(now);
    let started = 0;
    for (const d of due) {
      if (started >= free) break;
      if ((this.byEndpoint.get(d.webhook_id) ?? 0) >= PER_ENDPOINT) continue;
      if ((this.byTenant.get(d.owner) ?? 0) >= PER_TENANT) continue;
      // The attempt is counted as it is claimed: one cut short by a crash still shows in the log.
      const result = await db
        .updateTable("webhook_deliveries")
        .set({ lease_owner: this.instance, lease_until: now + DELIVERY_LEASE_MS, attempts: d.attempts + 1 })
        .where("id", "=", d.id)
        .where("state", "=", "pending")
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) continue;
      started++;
      this.track(d);
    }
    return started;
  }

  /**
   * Deliveries due now, not leased, in order per key, at most a few pages of what can start:
   * endpoints and tenants with all their slots taken are not read at all, so that their backlog
   * cannot fill the page and hide everyone else's.
   */
  private dueNow(now: number): Promise<Due[]> {
    const db = this.options.store.db;
    const fullEndpoints = [...this.byEndpoint].filter(([, n]) => n >= PER_ENDPOINT).map(([id]) => id);
    const fullTenants = [...this.byTenant].filter(([, n]) => n >= PER_TENANT).map(([owner]) => owner);
    const fullKeys = fullTenants.filter((o): o is string => o !== null);
    return (
      db
        .selectFrom("webhook_deliveries as d")
        .innerJoin("webhooks as w", "w.id", "d.webhook_id")
        .innerJoin("webhook_events as e", "e.id", "d.event_id")
        .select([
          "d.id",
          "d.webhook_id",
          "w.owner",
          "d.attempts",
          "d.created_at",
          "w.url",
          "w.secret",
          "e.id as event_id",
          "e.type",
          "e.data",
          "e.created_at as event_created_at",
          "e.trace_parent",
        ])
        .where("d.state", "=", "pending")
        .where("d.next_attempt_at", "<=", now)
        .where((eb) => eb.or([eb("d.lease_until", "is", null), eb("d.lease_until", "<", now)]))
        // Endpoints and tenants with all their slots taken are not read at all, so that their
        // backlog cannot fill the page and hide everyone else's.
        .$if(fullEndpoints.length > 0, (q) => q.where("d.webhook_id", "not in", fullEndpoints))
        .$if(fullTenants.includes(null), (q) => q.where("w.owner", "is not", null))
        .$if(fullKeys.length > 0, (q) =>
          q.where((eb) => eb.or([eb("w.owner", "is", null), eb("w.owner", "not in", fullKeys)])),
        )
        // In order per key: nothing goes while an earlier event of its key is still pending for the endpoint.
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom("webhook_deliveries as p")
                .select("p.id")
                .whereRef("p.webhook_id", "=", "d.webhook_id")
                .whereRef("p.order_key", "=", "d.order_key")
                .whereRef("p.order_seq", "<", "d.order_seq")
                .where("p.state", "=", "pending"),
            ),
          ),
        )
        .orderBy("d.next_attempt_at")
        .orderBy("d.order_seq")
        .limit(fixedLimit(IN_FLIGHT * 4))
        .execute()
    );
  }

  /** Sends in the background, holding the endpoint's and the tenant's slot until it settles. */
  private track(d: Due): void {
    const bump = <K>(map: Map<K, number>, key: K, by: number) => {
      const n = (map.get(key) ?? 0) + by;
      if (n === 0) map.delete(key);
      else map.set(key, n);
    };
    bump(this.byEndpoint, d.webhook_id, 1);
    bump(this.byTenant, d.owner, 1);
    // The lease is renewed while the receiver takes its time (up to --webhook-timeout-ms), so a short
    // one is enough, and a delivery held by an instance that was killed goes again within it.
    const renewal = setInterval(() => {
      void this.options.store.db
        .updateTable("webhook_deliveries")
        .set({ lease_until: this.now() + DELIVERY_LEASE_MS })
        .where("id", "=", d.id)
        .where("lease_owner", "=", this.instance)
        .execute()
        .catch(() => {});
    }, DELIVERY_LEASE_MS / 3);
    renewal.unref();
    const sending: Promise<void> = this.deliver(d)
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error, delivery: d.id }, "webhook delivery failed"),
      )
      .finally(() => {
        clearInterval(renewal);
        this.inFlight.delete(sending);
        bump(this.byEndpoint, d.webhook_id, -1);
        bump(this.byTenant, d.owner, -1);
        this.kick();
      });
    this.inFlight.add(sending);
  }

  /** One attempt; with tracing on, a span of the trace its event was made in (a transaction's life). */
  private deliver(d: Due): Promise<void> {
    return inStoredTrace(d.trace_parent, "chaingate.webhook", (span) => this.attempt(d, span), {
      "chaingate.webhook.id": d.webhook_id,
      "chaingate.webhook.event": d.type,
      "chaingate.webhook.attempt": d.attempts + 1,
    });
  }

  private async attempt(d: Due, span: Span | undefined): Promise<void> {
    const body = JSON.stringify({
      id: d.event_id,
      type: d.type,
      created_at: new Date(Number(d.event_created_at)).toISOString(),
      data: JSON.parse(d.data) as unknown,
    });
    let status: number | null = null;
    let failure: string | null = null;
    try {
      const host = new URL(d.url).hostname.replace(/^\[|\]$/g, "");
      if (!this.options.settings.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
        throw Object.assign(new Error(`${host} is a private address`), { code: NOT_PUBLIC });
      }
      const response = await request(d.url, {
        method: "POST",
        body,
        dispatcher: this.agent,
        signal: AbortSignal.any([this.aborts.signal, AbortSignal.timeout(this.options.settings.timeoutMs)]),
        headers: {
          "content-type": "application/json",
          "user-agent": "chaingate-webhooks",
          "x-chaingate-event-id": d.event_id,
          "x-chaingate-event-type": d.type,
          [SIGNATURE_HEADER]: signatureHeader(d.secret, body, Math.floor(this.now() / 1000)),
          // The receiver may continue the trace (W3C traceparent), when tracing is on.
          ...traceHeaders(),
        },
      });
      status = response.statusCode;
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (status < 200 || status >= 300) failure = `receiver answered ${status}`;
    } catch (error) {
      // The tenant sees the class; the operator's log keeps the whole error.
      failure = failureClass(error);
      this.options.logger.debug(
        { err: error, delivery: d.id, webhook: d.webhook_id },
        "webhook attempt failed",
      );
    }
    if (span !== undefined) {
      if (status !== null) span.setAttribute("http.response.status_code", status);
      if (failure !== null) failed(span, failure);
    }
    await this.settle(d, status, failure);
  }

  private async settle(d: Due, status: number | null, failure: string | null): Promise<void> {
    const now = this.now();
    const attempts = d.attempts + 1;
    const base = { attempts, last_status: status, lease_owner: null, lease_until: null };
    const update = this.options.store.db.updateTable("webhook_deliveries").where("id", "=", d.id);
    if (failure === null) {
      await update.set({ ...base, state: "delivered", delivered_at: now, last_error: null }).execute();
      return;
    }
    const givenUp = now - Number(d.created_at) >= this.options.settings.retryForMs;
    if (givenUp) {
      this.options.logger.warn({ delivery: d.id, url: d.url, failure }, "webhook delivery given up");
    }
    await update
      .set({
        ...base,
        state: givenUp ? "failed" : "pending",
        last_error: failure.slice(0, 500),
        next_attempt_at: now + retryDelay(attempts, this.options.settings.retryBaseMs, this.random),
      })
      .execute();
  }
}
