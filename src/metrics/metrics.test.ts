import parsePrometheus from "parse-prometheus-text-format";
import { expect, it } from "vitest";
import { sendAndWait } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { suiteRuntime } from "../test-support/test-runtime.js";
import { waitFor } from "../test-support/token-helpers.js";

const rt = suiteRuntime();

async function scrape() {
  const response = await fetch(`${rt.url}/metrics`);
  expect(response.headers.get("content-type")).toMatch(/text\/plain/);
  const families = parsePrometheus(await response.text());
  const family = (name: string) => {
    const found = families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric family ${name}`);
    return found;
  };
  const value = (name: string, labels: Record<string, string> = {}) =>
    Number(
      family(name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
        ?.value ?? Number.NaN,
    );
  return { families, family, value };
}

it("/metrics is valid Prometheus text and counts what happened", async () => {
  await rt.post("/eth_blockNumber");
  await rt.post("/eth_blockNumber");
  await rt.post("/eth_getBalance", { params: ["0x12"] });
  await rt.post("/eth_newBlockFilter");
  await rt.post("/wallet", { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 });
  await sendAndWait(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" });

  const m = await scrape();
  expect(
    m.value("chaingate_http_requests_total", { route: "/eth_blockNumber", method: "POST", status: "200" }),
  ).toBe(2);
  expect(m.value("chaingate_http_requests_total", { route: "/wallet", method: "POST", status: "200" })).toBe(
    1,
  );
  expect(m.value("chaingate_rpc_calls_total", { method: "eth_getBalance", outcome: "error" })).toBe(1);
  expect(m.value("chaingate_rpc_calls_total", { method: "eth_blockNumber", outcome: "ok" })).toBe(2);
  expect(m.family("chaingate_http_request_duration_seconds").type).toBe("HISTOGRAM");
  expect(m.value("chaingate_filters_open", { kind: "block" })).toBe(1);
  expect(m.value("chaingate_upstream_healthy", { chain: "1001" })).toBe(1);
  expect(m.value("chaingate_upstream_answered", { chain: "1001" })).toBeGreaterThan(0);
  expect(m.value("chaingate_chain_head", { chain: "1001" })).toBeGreaterThanOrEqual(1);
  expect(m.value("chaingate_scrypt_queue_length")).toBe(0);
  expect(m.value("chaingate_process_resident_memory_bytes")).toBeGreaterThan(0);
  expect(
    m.value("chaingate_cache_lookups", { result: "hit" }) +
      m.value("chaingate_cache_lookups", { result: "miss" }),
  ).toBeGreaterThan(0);
});

it("counts transactions and transports by state, from the store", async () => {
  const [wallet] = (await rt.post("/wallet", { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 }))
    .json as { id: string }[];
  await rt.post("/register_new_member", { name: "Peer", chain_id: 1002, role: "ISSUER" });
  const sent = await rt.post("/transport_arbitrary_message", {
    wallet_id: wallet!.id,
    password: "pw",
    destination_chain_id: 1002,
    // Any contract on 1002 (a receiver without code is refused up front): the endpoint itself.
    destination: rt.system!.endpoint,
    payload: "0x01",
  });
  expect((sent.json as { result?: unknown }).result).toBeDefined();
  // Store counts are bounded reads (decision 87): a count that took a while (a busy store) may be
  // reused for a moment, so the new transport shows within a deadline rather than at once.
  const sum = (series: { value?: string }[]) => series.reduce((total, s) => total + Number(s.value), 0);
  const m = await waitFor("the transport in chaingate_transports", async () => {
    const now = await scrape();
    const messages = now.family("chaingate_transports").metrics.filter((s) => s.labels?.kind === "MESSAGE");
    return sum(messages) >= 1 ? now : undefined;
  });
  const transports = m.family("chaingate_transports").metrics.filter((s) => s.labels?.kind === "MESSAGE");
  expect(sum(transports)).toBe(1);
  // The system deployments, the registration and the transport were all signed by chaingate.
  expect(sum(m.family("chaingate_transactions").metrics)).toBeGreaterThanOrEqual(4);
});

it("unknown methods share one label, so callers cannot grow the series", async () => {
  for (let i = 0; i < 5; i++) await rt.post("/", { jsonrpc: "2.0", id: i, method: `made_up_${i}` });
  const m = await scrape();
  const methods = m.family("chaingate_rpc_calls_total").metrics.map((s) => s.labels?.method);
  expect(methods.filter((name) => name?.startsWith("made_up"))).toHaveLength(0);
  expect(m.value("chaingate_rpc_calls_total", { method: "other", outcome: "error" })).toBe(5);
});
