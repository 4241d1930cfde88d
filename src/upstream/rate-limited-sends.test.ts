/** A node that rate-limits sends (HTTP 429, -32005 "limit exceeded") is counted against and cooled; one that finds a request too large is not. */
import { expect, it } from "vitest";
import { devTransferAt, native } from "../test-support/chain-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { startRpcProxy } from "../test-support/rpc-proxy.js";

const own = ownNodes("rate-limited-sends");

it("sends through two upstreams, one answering 429 or -32005 to every send: all are taken, the limiter is faulted and asked less", async () => {
  const anvil = await own.anvil("a");
  let limitedSends = 0;
  let asJsonRpc = false;
  const limiter = await startRpcProxy(anvil.url, (method, id, response) => {
    if (method !== "eth_sendRawTransaction") return false;
    limitedSends++;
    if (asJsonRpc) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32005, message: "limit exceeded" } }),
      );
    } else {
      response.writeHead(429, { "content-type": "text/plain" });
      response.end("Too Many Requests");
    }
    return true;
  });
  const plain = await startRpcProxy(anvil.url);
  const rt = await own.runtime({ env: { CHAINGATE_UPSTREAMS: `${limiter.url},${plain.url}` } });
  const stats = () => rt.chains.home.pool.stats();
  const limiterStats = () => stats().find((s) => s.label === new URL(limiter.url).origin)!;

  for (const [round, jsonRpc] of [
    [0, false],
    [1, true],
  ] as const) {
    asJsonRpc = jsonRpc;
    const faultsBefore = limiterStats().faults;
    const limitedBefore = limitedSends;
    for (let i = 0; i < 8; i++) {
      const raw = await devTransferAt(1001, round * 8 + i);
      const answer = await native(rt, "eth_sendRawTransaction", [raw]);
      expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    }
    // Counted against it: faulted, and cooled, so most sends of the round never reached it.
    expect(limiterStats().faults).toBeGreaterThan(faultsBefore);
    expect(limitedSends - limitedBefore).toBeLessThan(8);
    expect(limitedSends - limitedBefore).toBeGreaterThan(0);
  }
  await limiter.close();
  await plain.close();
}, 90_000);
