import { createServer } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AnvilNode } from "../devnet/anvil-node.js";
import { NodeRpcError } from "../errors/rpc-errors.js";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { DEV_ACCOUNT, signedDevTransfer } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { HttpUpstream, MAX_BATCH } from "./http-upstream.js";

const own = ownNodes("batched");
let anvil: AnvilNode;
let proxy: RpcProxy;
/** The next request that carries one of these methods has its connection cut before any answer. */
const dropNext = new Set<string>();

beforeAll(async () => {
  anvil = await own.anvil("node");
  proxy = await startRpcProxy(anvil.url, (method, _id, response) => {
    if (method === undefined || !dropNext.delete(method)) return false;
    response.socket?.destroy();
    return true;
  });
});
afterAll(async () => {
  await proxy?.close();
});

const nonceOf = async (upstream: HttpUpstream) =>
  Number(await upstream.call({ method: "eth_getTransactionCount", params: [DEV_ACCOUNT, "pending"] }));

/** Runs `work` with an upstream in front of the proxy, closed after it whatever happens. */
async function withUpstream(work: (upstream: HttpUpstream) => Promise<void>): Promise<void> {
  const upstream = new HttpUpstream(proxy.url, 10_000, upstreamTraitsOf);
  try {
    await work(upstream);
  } finally {
    await upstream.close();
  }
}

it("batchable calls made in one turn share one request; each gets its own answer or error", async () => {
  await withUpstream(async (upstream) => {
    const nonce = await nonceOf(upstream);
    proxy.reset();
    const outcomes = await Promise.allSettled([
      upstream.call({ method: "eth_getBalance", params: [DEV_ACCOUNT, "latest"], batch: true }),
      upstream.call({
        method: "eth_sendRawTransaction",
        params: [await signedDevTransfer(nonce)],
        batch: true,
      }),
      upstream.call({ method: "eth_sendRawTransaction", params: ["0x1234"], batch: true }),
      upstream.call({ method: "eth_chainId", params: [], batch: true }),
    ]);
    expect(proxy.requests).toBe(1);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const values = outcomes.map((o) => (o.status === "fulfilled" ? o.value : o.reason));
    expect(BigInt(values[0] as string)).toBeGreaterThan(0n);
    expect(values[1]).toMatch(/^0x[0-9a-f]{64}$/);
    // The node's refusal of one call is that call's answer, not a fault of the batch.
    expect(values[2]).toBeInstanceOf(NodeRpcError);
    expect(values[3]).toBe("0x3e9");

    // Calls not marked batchable, or alone in their turn, go as plain calls.
    proxy.reset();
    await Promise.all([
      upstream.call({ method: "eth_chainId", params: [] }),
      upstream.call({ method: "eth_chainId", params: [] }),
    ]);
    await upstream.call({ method: "eth_chainId", params: [], batch: true });
    expect(proxy.requests).toBe(3);
  });
});

it(`more than ${MAX_BATCH} calls in one turn go as several batches`, async () => {
  await withUpstream(async (upstream) => {
    proxy.reset();
    // Distinct reads (identical ones would share one call, see below).
    const answers = await Promise.all(
      Array.from({ length: MAX_BATCH * 2 + 1 }, (_, i) =>
        upstream.call({
          method: "eth_getBalance",
          params: [`0x${(i + 1).toString(16).padStart(40, "0")}`, "latest"],
          batch: true,
        }),
      ),
    );
    expect(answers).toHaveLength(MAX_BATCH * 2 + 1);
    expect(proxy.counts.get("eth_getBalance")).toBe(MAX_BATCH * 2 + 1);
    expect(proxy.requests).toBe(3);
  });
});

it("identical plain reads of one turn share one call of its batch; sends and other reads do not", async () => {
  await withUpstream(async (upstream) => {
    proxy.reset();
    const balance = () =>
      upstream.call({ method: "eth_getBalance", params: [DEV_ACCOUNT, "latest"], batch: true });
    const receipt = () =>
      upstream.call({ method: "eth_getTransactionReceipt", params: [`0x${"ab".repeat(32)}`], batch: true });
    const answers = await Promise.all([balance(), balance(), receipt(), receipt(), balance()]);
    expect(proxy.requests).toBe(1);
    expect(proxy.counts.get("eth_getBalance")).toBe(1);
    // A receipt is an object a caller may change: each caller gets its own.
    expect(proxy.counts.get("eth_getTransactionReceipt")).toBe(2);
    expect(new Set([answers[0], answers[1], answers[4]]).size).toBe(1);
    expect(BigInt(answers[0] as string)).toBeGreaterThan(0n);
    // The next turn asks again: nothing is kept past its batch.
    proxy.reset();
    await Promise.all([balance(), balance()]);
    expect(proxy.counts.get("eth_getBalance")).toBe(1);
    expect(proxy.requests).toBe(1);
  });
});

it("a dropped batch: its reads are asked again, its sends are not repeated", async () => {
  await withUpstream(async (upstream) => {
    const nonce = await nonceOf(upstream);
    const raw = await signedDevTransfer(nonce);
    proxy.reset();
    dropNext.add("eth_sendRawTransaction");
    const [balance, send] = await Promise.allSettled([
      upstream.call({ method: "eth_getBalance", params: [DEV_ACCOUNT, "latest"], batch: true }),
      upstream.call({ method: "eth_sendRawTransaction", params: [raw], batch: true }),
    ]);
    expect(balance.status).toBe("fulfilled");
    expect(send.status).toBe("rejected");
    expect((send as PromiseRejectedResult).reason).toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: true,
    });
    expect(proxy.counts.get("eth_sendRawTransaction")).toBe(1);
    expect(proxy.counts.get("eth_getBalance")).toBe(2);
    // Nothing reached the node: the nonce is still free.
    expect(await nonceOf(upstream)).toBe(nonce);
  });
});

it("a node that refuses batches is asked one call at a time from then on", async () => {
  // What some providers answer a batch with: one error object, nothing run.
  let batchesRefused = 0;
  let singles = 0;
  const refusing = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      if (body.startsWith("[")) {
        batchesRefused++;
        response.writeHead(400, { "content-type": "application/json" });
        response.end(
          '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}',
        );
        return;
      }
      singles++;
      fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then(async (answer) => {
          response.writeHead(answer.status, { "content-type": "application/json" });
          response.end(await answer.text());
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
  const upstream = new HttpUpstream(
    `http://127.0.0.1:${(refusing.address() as { port: number }).port}`,
    10_000,
    upstreamTraitsOf,
  );
  try {
    const nonce = await nonceOf(upstream);
    singles = 0;
    const [sent, chainId] = await Promise.all([
      upstream.call({
        method: "eth_sendRawTransaction",
        params: [await signedDevTransfer(nonce)],
        batch: true,
      }),
      upstream.call({ method: "eth_chainId", params: [], batch: true }),
    ]);
    expect(sent).toMatch(/^0x[0-9a-f]{64}$/);
    expect(chainId).toBe("0x3e9");
    expect(batchesRefused).toBe(1);
    expect(singles).toBe(2);
    await Promise.all([
      upstream.call({ method: "eth_chainId", params: [], batch: true }),
      upstream.call({ method: "eth_chainId", params: [], batch: true }),
    ]);
    expect(batchesRefused).toBe(1);
    expect(singles).toBe(4);
    expect(await nonceOf(upstream)).toBe(nonce + 1);
  } finally {
    await upstream.close();
    refusing.closeAllConnections();
    await new Promise((r) => refusing.close(r));
  }
});
