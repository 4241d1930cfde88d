import { expect, it } from "vitest";
import { native, nodeCall } from "../test-support/chain-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";

const own = ownNodes("lag");

const mine = (url: string, blocks: number) => nodeCall(url, "anvil_mine", [`0x${blocks.toString(16)}`]);

it("a lagging upstream is passed over, and its 'not found' is asked again of one that is ahead", async () => {
  const behind = await own.anvil("behind");
  const ahead = await own.anvil("ahead");
  await mine(ahead.url, 10);
  const runtime = await own.runtime({
    env: { CHAINGATE_UPSTREAMS: `${behind.url},${ahead.url}`, CHAINGATE_CACHE_MB: "0" },
  });
  const stats = () => runtime.chains.home.pool.stats();
  // Both heads known after the first polls.
  for (let i = 0; i < 50 && stats().some((s) => s.head === null); i++)
    await new Promise((r) => setTimeout(r, 50));
  expect(stats().map((s) => s.lag)).toEqual([10, 0]);

  const answeredBefore = stats().map((s) => s.answered);
  for (let i = 0; i < 20; i++) {
    expect((await native(runtime, "eth_blockNumber")).result).toBe("0xa");
  }
  // Every answer was the ahead node's (0xa above); its count holds all 20. The behind node's count
  // may still move: the gateway's own background calls (readiness) are not the client's.
  const answered = stats().map((s, i) => s.answered - answeredBefore[i]!);
  expect(answered[1]).toBeGreaterThanOrEqual(20);

  // Two blocks behind counts as in sync, so it takes its turn, and it does not know block 10 yet:
  // its null is asked again of the node that is ahead, and the client gets the block every time.
  await mine(behind.url, 8);
  for (let i = 0; i < 50 && stats()[0]!.lag !== 2; i++) await new Promise((r) => setTimeout(r, 50));
  const turnsBefore = stats()[0]!.answered;
  for (let i = 0; i < 10; i++) {
    const block = await native(runtime, "eth_getBlockByNumber", ["0xa", false]);
    expect((block.result as { number: string } | null)?.number).toBe("0xa");
  }
  expect(stats()[0]!.answered - turnsBefore).toBeGreaterThanOrEqual(4);

  // A block that does not exist anywhere is still null.
  expect((await native(runtime, "eth_getBlockByNumber", ["0x100", false])).result).toBeNull();

  // Once it catches up it is used again.
  await mine(behind.url, 2);
  for (let i = 0; i < 50 && stats()[0]!.lag !== 0; i++) await new Promise((r) => setTimeout(r, 50));
  const before = stats()[0]!.answered;
  for (let i = 0; i < 10; i++) await native(runtime, "eth_chainId");
  expect(stats()[0]!.answered).toBeGreaterThan(before);
}, 60_000);
