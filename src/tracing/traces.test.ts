import { join } from "node:path";
import { type Hex, toHex } from "viem";
import { afterAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { type Collector, type ReceivedSpan, startCollector } from "../test-support/otlp-collector.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { describeEachStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime } from "../test-support/test-runtime.js";
import { newWallet } from "../test-support/token-helpers.js";
import { type Receiver, startReceiver } from "../test-support/webhook-receiver.js";
import type { TransferRecord } from "../tx/list-transfers.js";

const nodes = ownNodes("traces");
const collectors: Collector[] = [];
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all([...collectors.map((c) => c.close()), ...receivers.map((r) => r.down())]);
});

/** The client's own trace, continued by chaingate (W3C traceparent). */
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const BUMP_TRACE = "0af7651916cd43dd8448eb211c80319c";

const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

describeEachStore(
  "OpenTelemetry traces: one trace per custody transaction's life, across instances",
  (target) => {
    it("signs and sends on one instance (http/json), follows to confirmation and delivers the webhook on another (http/protobuf), all in the client's trace", async () => {
      const anvil = await nodes.anvil(`anvil-${target}`);
      const collector = await startCollector();
      collectors.push(collector);
      const receiver = await startReceiver();
      receivers.push(receiver);
      const store = await tempStore(target);
      const dataDir = join(nodes.dir, `data-${target}`);
      const env = (protocol: string, service: string) => ({
        CHAINGATE_UPSTREAMS: anvil.url,
        CHAINGATE_TRACKER_INTERVAL_MS: "100",
        CHAINGATE_WEBHOOK_ALLOW_PRIVATE: "true",
        CHAINGATE_WEBHOOK_INTERVAL_MS: "50",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: service,
      });
      let hash: Hex;
      const first = await startTestRuntime({ store, dataDir, env: env("http/json", "chaingate-a") });
      try {
        const wallet = await newWallet(first, "trace-pw");
        await nodeCall(anvil.url, "anvil_setBalance", [wallet.address, toHex(10n ** 18n)]);
        const hook = await first.post("/webhooks", { url: receiver.url, events: ["transaction.confirmed"] });
        expect(hook.status, JSON.stringify(hook.json)).toBe(200);
        // Nothing is mined until the first instance has stopped: the second one sees the receipt.
        await nodeCall(anvil.url, "evm_setAutomine", [false]);
        const sent = await first.post(
          "/transaction",
          { wallet_id: wallet.id, password: "trace-pw", transaction: { to: DEV_ACCOUNT_2, value: "1" } },
          { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
        );
        expect(sent.status, JSON.stringify(sent.json)).toBe(200);
        hash = (sent.json as { tx_hash: Hex }).tx_hash;
      } finally {
        // Its spans are exported at shutdown at the latest.
        await first.close();
      }
      const second = await nodes.runtime({ store, dataDir, env: env("http/protobuf", "chaingate-b") });
      try {
        await nodeCall(anvil.url, "evm_setAutomine", [true]);
        // A chain of unknown id is final 64 blocks deep (chain-trust.ts).
        await nodeCall(anvil.url, "anvil_mine", [toHex(70)]);
        const confirmed = () => receiver.deliveries.some((d) => d.body.data.tx_hash === hash);
        expect(await waitUntil(confirmed, 60_000)).toBe(true);
        const traced = (name: string) => named(collector.spans, name).some((s) => s.traceId === CLIENT_TRACE);
        expect(
          await waitUntil(() => traced("chaingate.webhook") && traced("chaingate.confirmation"), 30_000),
        ).toBe(true);
      } finally {
        await second.close();
        await store.drop();
      }
      const delivery = receiver.deliveries.find((d) => d.body.data.tx_hash === hash)!;
      const id = delivery.body.data.id;
      expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-01$`));

      const life = collector.spans.filter((s) => s.traceId === CLIENT_TRACE);
      const one = (name: string) => {
        const found = named(life, name);
        expect(
          found.map((s) => s.name),
          `spans named ${name}`,
        ).toHaveLength(1);
        return found[0]!;
      };
      // The request on the first instance, in the client's trace, then the transaction inside it.
      const request = one("POST /transaction");
      expect(request).toMatchObject({ parentSpanId: CLIENT_SPAN, service: "chaingate-a", encoding: "json" });
      expect(request.attributes["http.response.status_code"]).toBe("200");
      const transaction = one("chaingate.transaction");
      expect(transaction.parentSpanId).toBe(request.spanId);
      expect(transaction.attributes).toMatchObject({
        "chaingate.transaction.id": id,
        "chaingate.transaction.hash": hash,
      });
      for (const step of ["chaingate.prepare", "chaingate.policy", "chaingate.sign", "chaingate.send"])
        expect(one(step).parentSpanId, step).toBe(transaction.spanId);
      // The node call, a child of the send, names the upstream by scheme, host and port only.
      const send = one("chaingate.send");
      const nodeSend = life.find(
        (s) => s.name === "eth_sendRawTransaction" && s.parentSpanId === send.spanId,
      );
      expect(nodeSend?.attributes["chaingate.upstream"]).toBe(new URL(anvil.url).origin.replace(/\/$/, ""));
      expect(nodeSend?.attributes["rpc.method"]).toBe("eth_sendRawTransaction");
      // The rest of its life, on the second instance, under the transaction's span.
      for (const step of ["chaingate.receipt", "chaingate.confirmation"]) {
        const span = one(step);
        expect(span, step).toMatchObject({
          parentSpanId: transaction.spanId,
          service: "chaingate-b",
          encoding: "protobuf",
        });
        expect(span.attributes["chaingate.transaction.id"]).toBe(id);
      }
      const webhook = named(life, "chaingate.webhook");
      expect(webhook.length).toBeGreaterThan(0);
      expect(webhook.every((s) => s.parentSpanId === transaction.spanId && s.service === "chaingate-b")).toBe(
        true,
      );
      expect(webhook.some((s) => s.attributes["http.response.status_code"] === "200")).toBe(true);
      // Both encodings were exported as asked.
      expect(collector.contentTypes).toContain("application/json");
      expect(collector.contentTypes).toContain("application/x-protobuf");
    });
  },
);

it("a fee bump is a span of the stuck transaction's trace, and its replacement's receipt and confirmation join the same trace", async () => {
  const collector = await startCollector();
  collectors.push(collector);
  const rt = await nodes.runtime({
    env: {
      CHAINGATE_TRACKER_INTERVAL_MS: "100",
      CHAINGATE_REPLACE_AFTER_SECONDS: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    },
  });
  const node = rt.devnet!.nodes[0]!.url;
  const transfers = async (walletId: string) =>
    (
      (await rt.post("/list_all_transfers", { wallet_id: walletId })).json as {
        result: { transfers: TransferRecord[] };
      }
    ).result.transfers;
  await nodeCall(node, "evm_setAutomine", [false]);
  let walletId = "";
  let original = "";
  try {
    const made = await rt.post("/wallet", { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 });
    walletId = (made.json as { id: string }[])[0]!.id;
    const sent = await rt.post(
      "/transaction",
      { wallet_id: walletId, password: "pw", transaction: { to: DEV_ACCOUNT_2, value: "5" } },
      { traceparent: `00-${BUMP_TRACE}-${CLIENT_SPAN}-01` },
    );
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    original = (sent.json as { tx_hash: string }).tx_hash;
    expect(
      await waitUntil(async () => (await transfers(walletId)).some((r) => r.state === "replaced"), 60_000),
    ).toBe(true);
  } finally {
    await nodeCall(node, "evm_setAutomine", [true]);
  }
  await nodeCall(node, "evm_mine", []);
  let mined: TransferRecord | undefined;
  expect(
    await waitUntil(async () => {
      mined = (await transfers(walletId)).find((r) => r.state === "confirmed");
      return mined !== undefined;
    }, 60_000),
  ).toBe(true);
  // What was mined is a replacement (same nonce, higher fees), not the stuck original.
  expect(mined!.tx_hash).not.toBe(original);
  const traced = (name: string) => named(collector.spans, name).some((s) => s.traceId === BUMP_TRACE);
  expect(await waitUntil(() => traced("chaingate.confirmation"), 30_000)).toBe(true);

  const life = collector.spans.filter((s) => s.traceId === BUMP_TRACE);
  const [transaction] = named(life, "chaingate.transaction");
  const bumps = named(life, "chaingate.fee_bump");
  expect(bumps.length).toBeGreaterThan(0);
  expect(bumps.every((s) => s.parentSpanId === transaction!.spanId)).toBe(true);
  // The replacement is sent from inside the bump.
  const bump = bumps[0]!;
  expect(life.some((s) => s.name === "eth_sendRawTransaction" && s.parentSpanId === bump.spanId)).toBe(true);
  expect(named(life, "chaingate.transaction.replaced").map((s) => s.parentSpanId)).toEqual([
    transaction!.spanId,
  ]);
  // The replacement's own receipt and confirmation are in the stuck transaction's trace.
  for (const step of ["chaingate.receipt", "chaingate.confirmation"])
    expect(
      life.some(
        (s) =>
          s.name === step &&
          s.parentSpanId === transaction!.spanId &&
          s.attributes["chaingate.transaction.id"] === mined!.id,
      ),
      step,
    ).toBe(true);
}, 180_000);
