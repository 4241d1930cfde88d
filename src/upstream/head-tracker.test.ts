import { pino } from "pino";
import { expect, it } from "vitest";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT, signedDevTransfer } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { HeadTracker, REFRESH_AFTER_MS } from "./head-tracker.js";
import { UpstreamPool } from "./upstream-pool.js";

const own = ownNodes("head-tracker");

it("after a send, an older head learnt elsewhere does not make the head fresh again; the next poll does", async () => {
  const anvil = await own.anvil("node");
  const pool = new UpstreamPool(1001, [anvil.url], 5_000, upstreamTraitsOf);
  const tracker = new HeadTracker(pool, 60_000, pino({ level: "silent" }));
  await tracker.poll();
  const before = tracker.head!;
  expect(before).toBeGreaterThanOrEqual(0);

  // A transaction is sent and mined (automine): the head moves on. anvil answers a send before it
  // has mined the block, so the test first waits for the node's own head.
  const nonce = Number(
    await pool.call({ method: "eth_getTransactionCount", params: [DEV_ACCOUNT, "pending"] }),
  );
  await pool.call({ method: "eth_sendRawTransaction", params: [await signedDevTransfer(nonce)] });
  const mined = async () => Number(await pool.call({ method: "eth_blockNumber", params: [] })) === before + 1;
  expect(await waitUntil(mined, 30_000)).toBe(true);
  tracker.refresh();
  expect(tracker.head).toBeUndefined();
  // What came back from a read that began before the send (a receipt of an older block, a late
  // eth_blockNumber answer, a pushed head): the head the send left behind.
  tracker.observe(before);
  expect(tracker.head).toBeUndefined();

  await tracker.poll();
  expect(tracker.head).toBe(before + 1);
  // Once a fresh head is read, heads learnt elsewhere count again.
  tracker.observe(before + 1);
  expect(tracker.head).toBe(before + 1);
  await pool.close();
});

it("under a steady stream of sends the head is read once per REFRESH_AFTER_MS, not after every send; once they stop it is fresh again", async () => {
  const anvil = await own.anvil("stream");
  const pool = new UpstreamPool(1002, [anvil.url], 5_000, upstreamTraitsOf);
  const tracker = new HeadTracker(pool, 60_000, pino({ level: "silent" }));
  let reads = 0;
  const pollHeads = pool.pollHeads.bind(pool);
  pool.pollHeads = () => {
    reads++;
    return pollHeads();
  };
  await tracker.poll();
  const first = reads;
  // A send every millisecond or so for 400 ms: every read ends after another send.
  const began = Date.now();
  while (Date.now() - began < 400) {
    tracker.refresh();
    expect(tracker.head).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const elapsed = Date.now() - began;
  // Each read after the first waits REFRESH_AFTER_MS from the read before it ended (timers fire
  // late on a busy machine, never much early). Reading again at once made a read every node round trip.
  expect(reads - first).toBeGreaterThan(0);
  expect(reads - first).toBeLessThanOrEqual(Math.floor(elapsed / (REFRESH_AFTER_MS - 5)) + 2);
  // The sends stop: the next read begins after the last one, and the head counts again.
  expect(await waitUntil(() => tracker.head !== undefined, 30_000)).toBe(true);
  expect(tracker.head).toBe(Number(await pool.call({ method: "eth_blockNumber", params: [] })));
  tracker.stop();
  await pool.close();
});
