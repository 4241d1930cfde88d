import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiKeyStore } from "../auth/api-keys.js";
import { loadConfig } from "../config/load-config.js";
import { type Envelope, nodeCall, nodeReceipt } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { keysInForce } from "../test-support/keys.js";
import { ownNodes } from "../test-support/own-nodes.js";
import type { TestRuntime } from "../test-support/test-runtime.js";

const own = ownNodes("namespaces");

describe("debug_*, trace_* and txpool_* go only to upstreams marked for them", () => {
  let rt: TestRuntime;
  let key: string;
  let marked: string;
  const rpc = async (method: string, params: unknown[], chainId = 1001) =>
    (
      await rt.post(
        `/?chain_id=${chainId}`,
        { jsonrpc: "2.0", id: 1, method, params },
        {
          authorization: `Bearer ${key}`,
        },
      )
    ).json as Envelope;

  beforeAll(async () => {
    // Chain 1001: an unmarked node first, then one marked for debug and txpool. Chain 1002: nothing marked.
    const [plain, traced, other] = await Promise.all([
      own.anvil("plain"),
      own.anvil("traced"),
      own.anvil("other", { chainId: 1002 }),
    ]);
    marked = traced.url;
    const config = own.configFile({
      homeChainId: 1001,
      chains: [
        {
          chainId: 1001,
          upstreams: [{ url: plain.url }, { url: traced.url, namespaces: ["debug", "txpool"] }],
        },
        { chainId: 1002, upstreams: [{ url: other.url }] },
      ],
    });
    rt = await own.runtime({ env: { CHAINGATE_CONFIG: config, CHAINGATE_RATE_TRACE: "6/min" } });
    key = (await new ApiKeyStore(rt.store).create("user", "tracer")).key;
    // The key ring reads the store twice a second: a call before it has the key would run keyless.
    await keysInForce(rt, [key]);
  }, 120_000);

  it("a trace is answered by the marked node only, and the budget is the key's own", async () => {
    // A transaction only the marked node has: sent to it directly, it is mined there alone.
    const hash = (await nodeCall(marked, "eth_sendTransaction", [
      { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" },
    ])) as string;
    // Traced before it is mined, anvil answers an empty frame (seen once on a busy CI machine).
    await nodeReceipt(marked, hash);
    // Four in a row: the unmarked node (which would answer "not found") is never asked.
    for (let i = 0; i < 4; i++) {
      const traced = await rpc("debug_traceTransaction", [hash, { tracer: "callTracer" }]);
      expect(traced.error, JSON.stringify(traced.error)).toBeUndefined();
      expect((traced.result as { to: string }).to.toLowerCase()).toBe(DEV_ACCOUNT_2.toLowerCase());
    }
    expect((await rpc("txpool_status", [])).result).toMatchObject({ pending: "0x0" });
    // The sixth call in the minute uses the last token; the seventh is RATE_LIMITED.
    expect((await rpc("txpool_status", [])).error).toBeUndefined();
    const limited = await rpc("txpool_status", []);
    expect(limited.error?.data).toMatchObject({ code: "RATE_LIMITED" });
  });

  it("a namespace no upstream of the chain is marked for is method-not-found, naming the config field", async () => {
    const none = await rpc("trace_block", ["latest"]);
    expect(none.error?.code).toBe(-32601);
    expect(none.error?.message).toMatch(/namespaces|marked/);
    const otherChain = await rpc("debug_traceBlockByNumber", ["latest"], 1002);
    expect(otherChain.error?.code).toBe(-32601);
  });

  it("a bad namespace in the config file is named at start", () => {
    const config = join(own.dir, "bad.json");
    writeFileSync(
      config,
      JSON.stringify({ chains: [{ chainId: 1001, upstreams: [{ url: marked, namespaces: ["admin"] }] }] }),
    );
    expect(() => loadConfig({ env: { CHAINGATE_CONFIG: config } })).toThrow(/upstreams\[0\]\.namespaces/);
  });
});
