/** The series deploy/prometheus/alerts.yml alerts on beyond the request and upstream series: error codes answered, quorum, the oldest open transaction, the webhook backlog. */
import { Counter, Gauge, type Registry } from "prom-client";
import { answeredCodes } from "../errors/answered-codes.js";
import type { Store } from "../store/database.js";
import { stateLiterals } from "../store/state-literal.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { BoundedRead } from "./bounded-read.js";

export interface AlertSources {
  chains: ChainRegistry;
  store: Store;
  /** Upstreams a chain needs answering (its configured quorum); absent: 2 where 2 or more are configured, else 1. */
  quorumOf?: (chainId: number) => number | undefined;
  now?: () => number;
}

export function registerAlertGauges(registers: Registry[], sources: AlertSources): void {
  const { chains, store } = sources;
  const now = sources.now ?? Date.now;
  new Counter({
    name: "chaingate_errors_answered_total",
    help: "Answers that carried each stable error code (REST problems and JSON-RPC errors) since start",
    labelNames: ["code"],
    registers,
    collect() {
      this.reset();
      for (const [code, count] of answeredCodes()) this.inc({ code }, count);
    },
  });
  new Gauge({
    name: "chaingate_chain_upstreams_required",
    help: "Upstreams each chain needs answering: its quorum (configured, else 2 of 2 or more, else 1)",
    labelNames: ["chain"],
    registers,
    collect() {
      this.reset();
      for (const chain of chains.all()) {
        const configured = chain.pool.stats().length;
        const required = sources.quorumOf?.(chain.chainId) ?? Math.min(2, configured);
        this.set({ chain: String(chain.chainId) }, required);
      }
    },
  });
  // Open transactions are a bounded set (the tracker moves them on), so the read stays small.
  const oldestOpen = new BoundedRead(() =>
    store.db
      .selectFrom("transactions")
      .select((eb) => ["chain_id", eb.fn.min("created_at").as("oldest")])
      .where("state", "in", stateLiterals(["queued", "sent"]))
      .groupBy("chain_id")
      .execute(),
  );
  new Gauge({
    name: "chaingate_transactions_oldest_open_seconds",
    help: "Age of the oldest signed transaction not yet mined (queued or sent) per chain: a nonce stuck behind it grows it",
    labelNames: ["chain"],
    registers,
    async collect() {
      const rows = await oldestOpen.get();
      this.reset();
      for (const chain of chains.all()) this.set({ chain: String(chain.chainId) }, 0);
      for (const row of rows)
        if (row.oldest !== null)
          this.set({ chain: String(row.chain_id) }, Math.max(0, (now() - Number(row.oldest)) / 1000));
    },
  });
  const backlog = new BoundedRead(() =>
    store.db
      .selectFrom("webhook_deliveries")
      .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.min("next_attempt_at").as("oldest")])
      .where("state", "=", "pending")
      .executeTakeFirst(),
  );
  new Gauge({
    name: "chaingate_webhook_deliveries_pending",
    help: "Webhook deliveries not yet made (all instances sharing the store)",
    registers,
    async collect() {
      this.set(Number((await backlog.get())?.n ?? 0));
    },
  });
}
