import { afterAll, beforeAll, expect, it } from "vitest";
import { sendAndWait } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2, EMITTER_INIT_CODE } from "../test-support/evm-fixtures.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "plain-transfer";
let rt: TestRuntime;
let proxied: TestRuntime;
let proxy: RpcProxy;
const asked: string[] = [];

beforeAll(async () => {
  rt = await startTestRuntime({ env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });
  // A second chaingate on the same chain behind a proxy that counts what is asked of the node.
  const node = rt.devnet!.nodes.find((n) => n.chainId === 1001)!.url;
  proxy = await startRpcProxy(node, (method) => {
    if (method !== undefined) asked.push(method);
    return false;
  });
  proxied = await startTestRuntime({
    env: { CHAINGATE_UPSTREAMS: proxy.url, CHAINGATE_TRACKER_INTERVAL_MS: "100" },
  });
});
afterAll(async () => {
  await proxied?.close();
  await proxy?.close();
  await rt?.close();
});

async function send(to: string, value: string) {
  const made = await proxied.post("/wallet", {
    type: "KEYSTORE_V3",
    password: PASSWORD,
    address_quantity: 1,
  });
  const { id, address } = (made.json as { id: string; address: string }[])[0]!;
  // The proxied chaingate has no devnet funder: fund through the node.
  await fetch(rt.devnet!.nodes[0]!.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "anvil_setBalance",
      params: [address, "0x56BC75E2D63100000"],
    }),
  });
  asked.length = 0;
  const sent = await proxied.post("/transaction", {
    wallet_id: id,
    password: PASSWORD,
    transaction: { to, value },
  });
  const rows = await proxied.store.db
    .selectFrom("transactions")
    .select("gas_limit")
    .where("wallet_id", "=", id)
    .execute();
  return { sent, gas: rows.map((r) => r.gas_limit), asked: [...asked] };
}

it("a plain transfer to an account with no code takes 21000 gas from two reads, without eth_estimateGas", async () => {
  const { sent, gas, asked: methods } = await send(DEV_ACCOUNT_2, "1");
  expect(sent.status, JSON.stringify(sent.json)).toBe(200);
  expect(gas).toEqual(["21000"]);
  expect(methods).toContain("eth_getCode");
  expect(methods).not.toContain("eth_estimateGas");
});

it("a transfer to a contract, or to a precompile address, is still estimated", async () => {
  const emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE })).contractAddress!;
  for (const to of [emitter, "0x0000000000000000000000000000000000000004"]) {
    const { sent, gas, asked: methods } = await send(to, "1");
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    expect(methods, to).toContain("eth_estimateGas");
    expect(BigInt(gas[0]!), to).toBeGreaterThan(21_000n);
  }
});

it("more than the balance is refused before anything is signed, as the estimate refused it", async () => {
  const { sent, gas } = await send(DEV_ACCOUNT_2, (10n ** 30n).toString());
  expect(sent.status).toBe(422);
  expect(sent.json).toMatchObject({ code: "INSUFFICIENT_FUNDS", errors: { value: (10n ** 30n).toString() } });
  expect(gas).toEqual([]);
});
