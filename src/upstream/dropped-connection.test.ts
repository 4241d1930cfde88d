import { expect, it } from "vitest";
import { native } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, signedDevTransfer } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { startRpcProxy } from "../test-support/rpc-proxy.js";

const own = ownNodes("dropped");

it("a read whose connection the node drops is asked again once on a fresh one; a send is never asked twice", async () => {
  const anvil = await own.anvil("node");
  /** The next call of each method listed here has its connection cut before any answer. */
  const dropNext = new Set<string>();
  const proxy = await startRpcProxy(anvil.url, (method, _id, response) => {
    if (method === undefined || !dropNext.delete(method)) return false;
    response.socket?.destroy();
    return true;
  });
  try {
    // One upstream, no cache: nothing else could hide the drop.
    const runtime = await own.runtime({ env: { CHAINGATE_UPSTREAMS: proxy.url, CHAINGATE_CACHE_MB: "0" } });

    proxy.reset();
    dropNext.add("eth_getBalance");
    const balance = await native(runtime, "eth_getBalance", [DEV_ACCOUNT, "latest"]);
    expect(balance.error).toBeUndefined();
    expect(BigInt(balance.result as string)).toBeGreaterThan(0n);
    expect(proxy.counts.get("eth_getBalance")).toBe(2);

    // A send is not a read: a drop is the client's to resolve (it may have been received).
    const nonce = Number((await native(runtime, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"])).result);
    proxy.reset();
    dropNext.add("eth_sendRawTransaction");
    const sent = await native(runtime, "eth_sendRawTransaction", [await signedDevTransfer(nonce)]);
    expect(sent.error).toMatchObject({ data: { code: "UPSTREAM_UNAVAILABLE", retryable: true } });
    expect(proxy.counts.get("eth_sendRawTransaction")).toBe(1);
  } finally {
    await proxy.close();
  }
});
