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
  const hedgeWinsBefore = stats()[0]!.hedgeWins;
  for (let i = 0; i < 20; i++) {
    expect((await native(runtime, "eth_blockNumber")).result).toBe("0xa");
  }
  // The ahead node is asked first every time. On a busy machine it may be slower than the hedge
  // delay, and then the behind node, asked second, can win the race (its 0x0 raised to 0xa): the
  // ahead node's aborted half is not counted, the behind node's win is. Every call is one or the
  // other. The behind node's plain count may still move: the gateway's background calls (readiness).
  const answered = stats()[1]!.answered - answeredBefore[1]!;
  const hedgesWonBehind = stats()[0]!.hedgeWins - hedgeWinsBefore;
  expect(answered + hedgesWonBehind).toBeGreaterThanOrEqual(20);
  expect(hedgesWonBehind).toBeLessThan(20);

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
