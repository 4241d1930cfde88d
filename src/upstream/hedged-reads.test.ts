/** Hedged reads with two anvils of one chain, one behind a proxy that holds its reads: a read the slow one has not answered in time is answered by the other; sends and side effects are never asked twice. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { waitFor } from "../test-support/token-helpers.js";

/** How long the slow upstream holds an eth_getBalance before it answers. */
const HOLD_MS = 3_000;

const own = ownNodes("hedged-reads");

it("reads the cache may hold are pure (hedged); sends and node state changes never are", () => {
  for (const method of ["eth_getBalance", "eth_call", "eth_getCode", "eth_chainId"])
    expect(upstreamTraitsOf(method).pure, method).toBe(true);
  for (const method of [
    "eth_sendRawTransaction",
    "eth_sendRawTransactionSync",
    "evm_mine",
    "anvil_setBalance",
  ])
    expect(upstreamTraitsOf(method).pure, method).toBe(false);
});

describe("two upstreams of one chain, the first slow on reads", () => {
  let slow: RpcProxy;
  let fastUrl: string;
  let hedging: TestRuntime;
  let plain: TestRuntime;
  let cancelled = 0;
  /** hold: the slow upstream holds its reads; down: it drops every connection (stopped); pass: it answers at once. */
  let slowMode: "hold" | "down" | "pass" = "hold";

  const configWith = (name: string, hedge: Record<string, unknown>) => {
    const file = join(own.dir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        chains: [{ chainId: 1001, upstreams: [{ url: slow.url }, { url: fastUrl }], ...hedge }],
      }),
    );
    return file;
  };

  beforeAll(async () => {
    const [a, b] = await Promise.all([own.anvil("a"), own.anvil("b")]);
    fastUrl = b.url;
    slow = await startRpcProxy(a.url, (method, _id, response, call) => {
      if (slowMode === "down") {
        response.destroy();
        return true;
      }
      if (method !== "eth_getBalance" || slowMode === "pass") return false;
      // A held read whose caller hung up before it was answered: the hedge's loser, cancelled.
      response.on("close", () => {
        if (!response.writableEnded) cancelled++;
      });
      setTimeout(() => {
        void fetch(a.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(call),
        })
          .then((r) => r.text())
          .then(
            (text) => {
              if (!response.destroyed) response.end(text);
            },
            () => response.destroy(),
          );
      }, HOLD_MS);
      return true;
    });
    hedging = await startTestRuntime({
      env: { CHAINGATE_CONFIG: configWith("hedged", { hedge: { afterMs: 100 } }) },
    });
    plain = await startTestRuntime({ env: { CHAINGATE_CONFIG: configWith("plain", { hedge: false }) } });
  }, 120_000);
  afterAll(async () => {
    await hedging?.close();
    await plain?.close();
    await slow?.close();
  });

  /** A distinct read each time (never a cache hit): the balance of a fresh address at block 0. */
  let next = 1;
  async function read(rt: TestRuntime): Promise<{ ms: number; result: unknown }> {
    const address = `0x${(next++).toString(16).padStart(40, "0")}`;
    const started = performance.now();
    const { json } = await rt.post("/", {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBalance",
      params: [address, "0x0"],
    });
    return { ms: performance.now() - started, result: (json as { result?: unknown }).result };
  }

  /** A counter summed over the upstreams, or only over those whose label holds `upstream`. */
  async function metric(rt: TestRuntime, name: string, upstream = ""): Promise<number> {
    const text = await (await fetch(`${rt.url}/metrics`)).text();
    return text
      .split("\n")
      .filter((line) => line.startsWith(`${name}{`) && line.includes(upstream))
      .reduce((sum, line) => sum + Number(line.split(" ")[1]), 0);
  }

  /** The slow upstream as /network shows it in `rt`. */
  async function slowUpstream(rt: TestRuntime): Promise<{ healthy: boolean; faults: number }> {
    const network = (await (await fetch(`${rt.url}/network`)).json()) as {
      chains: { upstreams: { label: string; healthy: boolean; faults: number }[] }[];
    };
    const found = network.chains.flatMap((c) => c.upstreams).find((u) => u.label === slow.url);
    if (!found) throw new Error(`${slow.url} is not among the upstreams /network shows`);
    return found;
  }

  it("with hedging every read is answered well before the slow upstream would; the hedges are counted", async () => {
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await read(hedging));
    for (const answer of answers) {
      expect(answer.result).toBe("0x0");
      expect(answer.ms).toBeLessThan(HOLD_MS);
    }
    // Round robin put the slow upstream first at least once: that read was hedged, and the hedge won.
    expect(await metric(hedging, "chaingate_upstream_hedges")).toBeGreaterThan(0);
    const wins = await metric(hedging, "chaingate_upstream_hedge_wins");
    expect(wins).toBeGreaterThan(0);
    // Each read the hedge won was cancelled on the slow upstream: its caller hung up, not waited
    // for the held answer (which would have ended the response, never counted here).
    await waitFor("the hedges' losers cancelled", async () => (cancelled >= wins ? true : undefined));
    expect(cancelled).toBe(wins);
  });

  it("an upstream hedges beat twice is asked after its peer for the pool's next calls: the next reads need no hedge", async () => {
    // Until the slow upstream was beaten twice (each read it is first for is: it holds every read).
    for (let i = 0; i < 60 && (await metric(hedging, "chaingate_upstream_hedge_wins")) < 2; i++)
      expect((await read(hedging)).result).toBe("0x0");
    expect(await metric(hedging, "chaingate_upstream_hedge_wins")).toBeGreaterThanOrEqual(2);
    const hedges = await metric(hedging, "chaingate_upstream_hedges");
    for (let i = 0; i < 10; i++) {
      const answer = await read(hedging);
      expect(answer.result).toBe("0x0");
    }
    expect(await metric(hedging, "chaingate_upstream_hedges")).toBe(hedges);
  });

  it("with hedge: false a read the slow upstream gets first waits for it", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await read(plain));
    for (const answer of answers) expect(answer.result).toBe("0x0");
    expect(answers.some((a) => a.ms >= HOLD_MS - 100)).toBe(true);
    expect(await metric(plain, "chaingate_upstream_hedges")).toBe(0);
  });

  it("an upstream put after its peer is first in turn again once back from an outage: the hedges it lost before are forgotten", async () => {
    // Beaten twice while it held reads (the test before made sure of that): the peer is asked first.
    expect(await metric(hedging, "chaingate_upstream_hedge_wins")).toBeGreaterThanOrEqual(2);
    const faults = (await slowUpstream(hedging)).faults;
    slowMode = "down";
    await waitFor(
      "the stopped upstream faulted",
      async () => ((await slowUpstream(hedging)).faults > faults ? true : undefined),
      60_000,
    );
    slowMode = "pass";
    await waitFor(
      "the upstream back in rotation",
      async () => ((await slowUpstream(hedging)).healthy ? true : undefined),
      60_000,
    );
    // Reads it is asked first for reach it at once; a hedge to it comes after the peer's 100 ms.
    const hedgesToSlow = await metric(hedging, "chaingate_upstream_hedges", slow.url);
    slow.reset();
    const reads = 20;
    for (let i = 0; i < reads; i++) expect((await read(hedging)).result).toBe("0x0");
    const asked = slow.counts.get("eth_getBalance") ?? 0;
    const askedFirst =
      asked - ((await metric(hedging, "chaingate_upstream_hedges", slow.url)) - hedgesToSlow);
    // Round robin over two gives it about half; still put after its peer, it would be first for none.
    expect(askedFirst).toBeGreaterThanOrEqual(reads / 4);
  }, 180_000);
});
