/** History-aware routing: an archive anvil and a pruned one (`--prune-history`) of one chain; reads at old blocks go where the state is, and with none a clear error says so. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMissingState } from "../errors/node-errors.js";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { type Envelope, native, nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import type { TestRuntime } from "../test-support/test-runtime.js";
import { UpstreamPool } from "./upstream-pool.js";

/** States the pruned node keeps. */
const KEPT = 4;
/** Blocks mined on both nodes before chaingate starts. */
const MINED = 16;

const own = ownNodes("history-routing");

it("each implementation's words for state it no longer holds are told from a revert and from a block not mined yet", () => {
  expect(
    isMissingState("missing trie node 1f2e (path ) state 0x1f2e is not available, not found", -32000),
  ).toBe(true);
  expect(isMissingState("historical state 0xabcd is not available", -32000)).toBe(true);
  expect(isMissingState("State at block #3 is pruned", -32603)).toBe(true);
  expect(isMissingState("pruned history unavailable", 4444)).toBe(true);
  expect(isMissingState("World state unavailable", -32000)).toBe(true);
  expect(isMissingState("No state available for block 0x12", -32002)).toBe(true);
  expect(isMissingState("BlockOutOfRangeError: block height is 12 but requested was 1", -32602)).toBe(true);
  // anvil's words for a block it has not mined yet, and a revert whose reason says "pruned".
  expect(isMissingState("BlockOutOfRangeError: block height is 12 but requested was 40", -32602)).toBe(false);
  expect(isMissingState("execution reverted: pruned", 3)).toBe(false);
  expect(isMissingState("header not found", -32000)).toBe(false);
});

describe("an archive node and a pruned node of one chain", () => {
  let pruned: RpcProxy;
  let archive: string;
  let prunedUrl: string;
  let rt: TestRuntime;
  const oldReads = () => (pruned.counts.get("eth_getBalance") ?? 0) + (pruned.counts.get("eth_call") ?? 0);

  beforeAll(async () => {
    const [a, p] = await Promise.all([own.anvil("archive"), own.anvil("pruned", { pruneHistory: KEPT })]);
    archive = a.url;
    prunedUrl = p.url;
    for (let i = 0; i < MINED; i++)
      await Promise.all([nodeCall(archive, "evm_mine"), nodeCall(prunedUrl, "evm_mine")]);
    pruned = await startRpcProxy(p.url);
    const config = join(own.dir, "chains.json");
    writeFileSync(
      config,
      JSON.stringify({
        chains: [{ chainId: 1001, upstreams: [{ url: pruned.url }, { url: archive }], hedge: false }],
      }),
    );
    rt = await own.runtime({ env: { CHAINGATE_CONFIG: config } });
  }, 120_000);
  afterAll(async () => {
    await pruned?.close();
  });

  const upstreams = async () =>
    (
      (await (await fetch(`${rt.url}/network`)).json()) as {
        chains: { upstreams: { label: string; oldest_state_block: number }[] }[];
      }
    ).chains[0]!.upstreams;

  it("the start-up probe finds the pruned node's oldest block with state; the archive's is 0", async () => {
    expect(
      await waitUntil(async () => (await upstreams()).some((u) => u.oldest_state_block > 0), 30_000),
    ).toBe(true);
    const [first, second] = await upstreams();
    // The pruned node keeps the last KEPT states or so: its oldest is well above block 1.
    expect(first!.oldest_state_block).toBeGreaterThan(MINED - KEPT - 2);
    expect(first!.oldest_state_block).toBeLessThanOrEqual(MINED);
    expect(second!.oldest_state_block).toBe(0);
    expect(await (await fetch(`${rt.url}/metrics`)).text()).toMatch(
      /chaingate_upstream_oldest_state_block\{[^}]*\} [1-9]/,
    );
  });

  it("every read at an old block is answered from the archive; the pruned node is not asked", async () => {
    pruned.reset();
    const truth = await nodeCall(archive, "eth_getBalance", [DEV_ACCOUNT, "0x2"]);
    for (let i = 0; i < 20; i++) {
      const answer = await native(rt, "eth_getBalance", [DEV_ACCOUNT, `0x${(2 + (i % 5)).toString(16)}`]);
      expect(answer.error, JSON.stringify(answer)).toBeUndefined();
      if (i % 5 === 0) expect(answer.result).toBe(truth);
    }
    const call = await native(rt, "eth_call", [{ to: DEV_ACCOUNT, data: "0x" }, "0x1"]);
    expect(call.error, JSON.stringify(call)).toBeUndefined();
    expect(oldReads()).toBe(0);
  });

  it("reads at the head still go to both upstreams in turn", async () => {
    pruned.reset();
    // Distinct addresses: each read is asked of a node, not answered from the cache.
    for (let i = 0; i < 6; i++) {
      const address = `0x${(i + 1).toString(16).padStart(40, "0")}`;
      expect((await native(rt, "eth_getTransactionCount", [address, "latest"])).error).toBeUndefined();
    }
    expect(pruned.counts.get("eth_getTransactionCount") ?? 0).toBeGreaterThan(0);
  });

  it.each([
    ["unhedged", false as const],
    ["hedged", { afterMs: 50 }],
  ])(
    "a pool that never probed learns from the pruned node's answer, asking it once (%s)",
    async (_, hedge) => {
      const pool = new UpstreamPool(1001, [pruned.url, archive], 5_000, upstreamTraitsOf, { hedge });
      try {
        pruned.reset();
        const truth = await nodeCall(archive, "eth_getBalance", [DEV_ACCOUNT, "0x3"]);
        for (let i = 0; i < 10; i++)
          expect(await pool.call({ method: "eth_getBalance", params: [DEV_ACCOUNT, "0x3"] })).toBe(truth);
        expect(oldReads()).toBeLessThanOrEqual(1);
        expect(pool.stats()[0]!.oldestState).toBeGreaterThan(3);
      } finally {
        await pool.close();
      }
    },
  );

  it("with only pruned upstreams, an old block answers STATE_UNAVAILABLE naming what each holds, not the node's words", async () => {
    const pool = new UpstreamPool(1001, [pruned.url], 5_000, upstreamTraitsOf);
    try {
      for (let i = 0; i < 2; i++)
        await expect(
          pool.call({ method: "eth_getBalance", params: [DEV_ACCOUNT, "0x1"] }),
        ).rejects.toMatchObject({
          code: "STATE_UNAVAILABLE",
          message: expect.stringMatching(/block 1 .*oldest \d+.*archive upstream/),
        });
      pruned.reset();
      // Known now: refused without asking the node again.
      await expect(pool.call({ method: "eth_getCode", params: [DEV_ACCOUNT, "0x1"] })).rejects.toMatchObject({
        code: "STATE_UNAVAILABLE",
      });
      expect(pruned.counts.get("eth_getCode") ?? 0).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("through chaingate with one pruned upstream, a client reads the clear error", async () => {
    const config = join(own.dir, "pruned-only.json");
    writeFileSync(config, JSON.stringify({ chains: [{ chainId: 1001, upstreams: [{ url: prunedUrl }] }] }));
    const alone = await own.runtime({ env: { CHAINGATE_CONFIG: config } });
    const answer: Envelope = await native(alone, "eth_getBalance", [DEV_ACCOUNT, "0x1"]);
    expect((answer.error?.data as { code?: string } | undefined)?.code, JSON.stringify(answer)).toBe(
      "STATE_UNAVAILABLE",
    );
    expect(answer.error?.message).not.toMatch(/BlockOutOfRange/);
    await alone.close();
  });
});
