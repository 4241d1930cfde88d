/** Signed bytes reach every healthy upstream: two anvils of one chain, one behind a proxy that can refuse sends; the client hears the first acceptance. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Hex, parseEther, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import type { TestRuntime } from "../test-support/test-runtime.js";
import { newWallet } from "../test-support/token-helpers.js";

/** A key of this file's own, funded on both nodes before the tests. */
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9c86dae88c7a8412f4603b6f78690d" as const;

const own = ownNodes("broadcast-sends");

describe("sends on a chain with two upstreams", () => {
  let proxy: RpcProxy;
  let nodeA: string;
  let nodeB: string;
  let rt: TestRuntime;
  let refuseOnA = false;
  const account = privateKeyToAccount(KEY);
  let nonce = 0;

  beforeAll(async () => {
    const [a, b] = await Promise.all([own.anvil("a"), own.anvil("b")]);
    nodeA = a.url;
    nodeB = b.url;
    for (const node of [nodeA, nodeB])
      await nodeCall(node, "anvil_setBalance", [account.address, toHex(parseEther("10"))]);
    proxy = await startRpcProxy(a.url, (method, id, response) => {
      if (method !== "eth_sendRawTransaction" || !refuseOnA) return false;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message: "txpool is full" } }),
      );
      return true;
    });
    const config = join(own.dir, "chains.json");
    writeFileSync(
      config,
      JSON.stringify({
        chains: [{ chainId: 1001, upstreams: [{ url: proxy.url }, { url: nodeB }], finality: 1 }],
      }),
    );
    rt = await own.runtime({ env: { CHAINGATE_CONFIG: config } });
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
  });

  const signed = () =>
    account.signTransaction({
      chainId: 1001,
      type: "eip1559",
      nonce: nonce++,
      to: DEV_ACCOUNT_2,
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 50_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
  const minedOn = (node: string, hash: string) =>
    waitUntil(async () => (await nodeCall(node, "eth_getTransactionReceipt", [hash])) !== null, 20_000);

  /** A fresh signed transfer sent through chaingate's POST /; the answer must be its hash. */
  async function sendSigned(): Promise<Hex | undefined> {
    const raw = await signed();
    const { json } = await rt.post("/", {
      jsonrpc: "2.0",
      id: nonce,
      method: "eth_sendRawTransaction",
      params: [raw],
    });
    expect(JSON.stringify(json)).toMatch(/"result":"0x[0-9a-f]{64}"/);
    return (json as { result?: Hex }).result;
  }

  it("a raw transaction sent through chaingate reaches both upstreams", async () => {
    const hash = await sendSigned();
    expect(await minedOn(nodeA, hash!)).toBe(true);
    expect(await minedOn(nodeB, hash!)).toBe(true);
  });

  it("one node's refusal does not fail a send the other accepted", async () => {
    refuseOnA = true;
    try {
      const hash = await sendSigned();
      expect(await minedOn(nodeB, hash!)).toBe(true);
      expect(await nodeCall(nodeA, "eth_getTransactionByHash", [hash])).toBeNull();
    } finally {
      refuseOnA = false;
    }
  });

  it("custody's own sends go to both upstreams too", async () => {
    const wallet = await newWallet(rt, "broadcast-pw");
    for (const node of [nodeA, nodeB])
      await nodeCall(node, "anvil_setBalance", [wallet.address, toHex(parseEther("1"))]);
    const sent = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: "broadcast-pw",
      transaction: { to: DEV_ACCOUNT_2, value: "1" },
    });
    const hash = (sent.json as { tx_hash?: string }).tx_hash;
    expect(hash, JSON.stringify(sent.json)).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await minedOn(nodeA, hash!)).toBe(true);
    expect(await minedOn(nodeB, hash!)).toBe(true);
  });
});
