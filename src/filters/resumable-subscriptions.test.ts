import { expect, it } from "vitest";
import WebSocket from "ws";
import { mine, nodeCall, sendAndWait } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT, EMITTER_INIT_CODE } from "../test-support/evm-fixtures.js";
import { suiteRuntime } from "../test-support/test-runtime.js";
import { parseCursor } from "./stream-cursor.js";
import { readMemory } from "./stream-recorder.js";

interface Notification {
  subscription: string;
  result: Record<string, unknown> & {
    number?: string;
    blockNumber?: string;
    transactionHash?: string;
    removed?: boolean;
  };
  cursor?: string;
}

/** A WebSocket client that keeps every notification it gets, with its cursor. */
async function client(url: string) {
  const socket = new WebSocket(url.replace("http", "ws"));
  const notes: Notification[] = [];
  /** What arrived, in order: an answer's result, or a notification's subscription id. */
  const arrivals: string[] = [];
  const waiting = new Map<number, (answer: { result?: unknown; error?: { message: string } }) => void>();
  let next = 1;
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString()) as { id?: number; method?: string; params?: Notification };
    if (message.method === "eth_subscription") {
      notes.push(message.params!);
      arrivals.push(`note ${message.params!.subscription}`);
    } else if (typeof message.id === "number") {
      arrivals.push(`answer ${String((message as { result?: unknown }).result)}`);
      waiting.get(message.id)?.(message as never);
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const call = (method: string, params: unknown[]) =>
    new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  const close = () =>
    new Promise((resolve) => {
      socket.once("close", resolve);
      socket.close();
    });
  return { socket, notes, arrivals, call, close };
}

const numberOf = (n: Notification) => Number(BigInt((n.result.number ?? n.result.blockNumber)!));

const rt = suiteRuntime();

it("a newHeads client that lost its socket resumes from its cursor: every missed head once, in order", async () => {
  const first = await client(rt.url);
  const subscribed = await first.call("eth_subscribe", ["newHeads", { resumable: true }]);
  expect(subscribed.error).toBeUndefined();
  await mine(rt, 1);
  await mine(rt, 1);
  expect(await waitUntil(() => first.notes.length >= 2, 20_000)).toBe(true);
  const seen = first.notes.map(numberOf);
  const cursor = first.notes.at(-1)!.cursor!;
  expect(cursor).toMatch(/^[0-9a-f]{32}-/);
  await first.close();
  // Blocks the client is not there for.
  for (let i = 0; i < 3; i++) await mine(rt, 1);
  const again = await client(rt.url);
  const resumed = await again.call("eth_subscribe", ["newHeads", { resumeAfter: cursor }]);
  expect(resumed.error).toBeUndefined();
  // The replay carries the new subscription's id and follows its answer: a client that routes
  // notifications by id (viem, ethers) sees every missed head.
  expect(await waitUntil(() => again.notes.length >= 3, 20_000)).toBe(true);
  expect(again.arrivals[0]).toBe(`answer ${String(resumed.result)}`);
  await mine(rt, 1);
  expect(await waitUntil(() => again.notes.length >= 4, 20_000)).toBe(true);
  for (const note of again.notes) expect(note.subscription).toBe(resumed.result);
  const all = [...seen, ...again.notes.map(numberOf)];
  // Contiguous: no gap, no repeat.
  expect(all).toEqual(Array.from({ length: all.length }, (_, i) => all[0]! + i));
  // A cursor made before cursors carried a count resumes by its position alone.
  const oldStyle = again.notes.at(-2)!.cursor!.replace(/-[0-9a-f]+$/, "");
  expect(oldStyle.split("-")).toHaveLength(3);
  const older = await client(rt.url);
  const fromOld = await older.call("eth_subscribe", ["newHeads", { resumeAfter: oldStyle }]);
  expect(fromOld.error).toBeUndefined();
  expect(await waitUntil(() => older.notes.length >= 1, 20_000)).toBe(true);
  expect(numberOf(older.notes[0]!)).toBe(numberOf(again.notes.at(-1)!));
  await older.close();
  // A cursor of another stream, or a made-up one, is refused with what to do instead.
  const refused = await again.call("eth_subscribe", ["newHeads", { resumeAfter: `${"0".repeat(32)}-1-0` }]);
  expect(refused.error?.message).toMatch(/cannot resume.*subscribe afresh/);
  expect(
    (await again.call("eth_subscribe", ["newPendingTransactions", { resumable: true }])).error?.message,
  ).toMatch(/only newHeads and logs/);
  await again.close();
});

/**
 * A log the stream `first` delivers (the reorg to come takes it back), then the stream gone: the log's
 * transaction and the cursor a client resumes after.
 */
async function lastLogThenGone(first: Awaited<ReturnType<typeof client>>, emitter: string) {
  const last = await lastLog(first, emitter);
  await first.close();
  return last;
}

/** A log the stream `first` delivers: the log's transaction and the cursor after it. */
async function lastLog(first: Awaited<ReturnType<typeof client>>, emitter: string) {
  const doomed = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  expect(
    await waitUntil(
      () => first.notes.some((n) => n.result.transactionHash === doomed.transactionHash),
      20_000,
    ),
  ).toBe(true);
  return { doomed, cursor: first.notes.at(-1)!.cursor! };
}

/**
 * A new client resuming a logs stream after `cursor`, until the log of `last` arrives: each log it
 * got as [transaction, removed], the subscription each came under and the one it was given.
 */
async function resumedUntil(cursor: string, last: string) {
  const again = await client(rt.url);
  const resumed = await again.call("eth_subscribe", ["logs", { resumeAfter: cursor }]);
  expect(resumed.error).toBeUndefined();
  expect(await waitUntil(() => again.notes.some((n) => n.result.transactionHash === last), 20_000)).toBe(
    true,
  );
  await again.close();
  return {
    got: again.notes.map((n) => [n.result.transactionHash, n.result.removed === true]),
    subscriptions: again.notes.map((n) => n.subscription),
    subscription: resumed.result,
  };
}

/** A new log emitter, and a client with a resumable logs stream of it. */
async function emitterStream() {
  const emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE })).contractAddress!;
  const node = rt.devnet!.nodes[0]!.url;
  const first = await client(rt.url);
  expect(
    (await first.call("eth_subscribe", ["logs", { address: emitter, resumable: true }])).error,
  ).toBeUndefined();
  return { emitter, node, first };
}

it("a logs client resumes across a reorg: what the reorg took back comes with removed: true, then the new chain's logs", async () => {
  const { emitter, node, first } = await emitterStream();
  const snapshot = await nodeCall(node, "evm_snapshot");
  const { doomed, cursor } = await lastLogThenGone(first, emitter);
  // The block with the doomed log goes; the chain grows longer with another log.
  await nodeCall(node, "evm_revert", [snapshot]);
  await mine(rt, 1);
  const kept = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  const { got } = await resumedUntil(cursor, kept.transactionHash);
  expect(got).toEqual([
    [doomed.transactionHash, true],
    [kept.transactionHash, false],
  ]);
});

/** The stream's record as the store holds it: its memory's text and the count it has reached. */
async function recordOf(stream: string): Promise<{ recent: string; count: number }> {
  const row = await rt.store.db
    .selectFrom("subscription_streams")
    .select("recent")
    .where("id", "=", stream)
    .executeTakeFirstOrThrow();
  return { recent: row.recent, count: readMemory(row.recent).count ?? 0 };
}

/**
 * A logs stream whose last notification (a log a reorg will take back) went out, the client gone,
 * and its record made to read as it did before that notification was recorded: what a client finds
 * when it is back before the record's write lands (decision 237). Answers the doomed log's
 * transaction, the cursor, the stream and the record as it should read.
 */
async function recordBehind() {
  const { emitter, node, first } = await emitterStream();
  const snapshot = await nodeCall(node, "evm_snapshot");
  const { doomed, cursor } = await lastLogThenGone(first, emitter);
  const { stream, count: counted } = parseCursor(cursor);
  const count = counted!;
  expect(await waitUntil(async () => (await recordOf(stream)).count >= count, 20_000)).toBe(true);
  const written = (await recordOf(stream)).recent;
  const memory = readMemory(written);
  const before = { ...memory, blocks: [], count: count - 1 };
  await rt.store.db
    .updateTable("subscription_streams")
    .set({ recent: JSON.stringify(before) })
    .where("id", "=", stream)
    .execute();
  // The block with the doomed log goes; the chain grows longer with another log.
  await nodeCall(node, "evm_revert", [snapshot]);
  await mine(rt, 1);
  const kept = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  return { doomed, kept, cursor, stream, written };
}

it("a client back before its stream's record was written waits for the record: the removal still comes", async () => {
  const { doomed, kept, cursor, stream, written } = await recordBehind();
  // The record's write lands while the resume is under way.
  const landed = new Promise((resolve) => setTimeout(resolve, 300)).then(() =>
    rt.store.db
      .updateTable("subscription_streams")
      .set({ recent: written })
      .where("id", "=", stream)
      .execute(),
  );
  const { got } = await resumedUntil(cursor, kept.transactionHash);
  await landed;
  expect(got).toEqual([
    [doomed.transactionHash, true],
    [kept.transactionHash, false],
  ]);
});

it("a resume whose stream's record never catches up with the cursor is refused, saying how to recover", async () => {
  const { cursor } = await recordBehind();
  const again = await client(rt.url);
  const resumed = await again.call("eth_subscribe", ["logs", { resumeAfter: cursor }]);
  expect(resumed.error?.message).toMatch(/cannot resume: the stream's record holds \d+ of the cursor's \d+/);
  expect(resumed.error?.message).toMatch(/subscribe afresh/);
  expect(again.notes).toEqual([]);
  await again.close();
});

it("resumes waiting for their stream's record count against the connection's 100 subscriptions: the 101st is refused", async () => {
  const { cursor } = await recordBehind();
  const again = await client(rt.url);
  // Sent at once: the first 100 wait for a record that never catches up, the last meets the cap.
  const answers = await Promise.all(
    Array.from({ length: 101 }, () => again.call("eth_subscribe", ["logs", { resumeAfter: cursor }])),
  );
  const messages = answers.map((a) => a.error?.message ?? "");
  expect(messages.filter((m) => /at most 100 subscriptions per connection/.test(m))).toHaveLength(1);
  expect(messages.filter((m) => /the stream's record holds/.test(m))).toHaveLength(100);
  expect(again.notes).toEqual([]);
  await again.close();
});

it("a removed log the stream could not send (its socket closing) still comes to the client that resumes", async () => {
  const { emitter, node, first } = await emitterStream();
  // Another client, there all along: when it hears of the reorg, so has the first stream.
  const watcher = await client(rt.url);
  expect((await watcher.call("eth_subscribe", ["logs", { address: emitter }])).error).toBeUndefined();
  const snapshot = await nodeCall(node, "evm_snapshot");
  const { doomed, cursor } = await lastLog(first, emitter);
  // The client says goodbye and never ends its side: the server holds the socket as closing (for
  // its close timeout) and the stream stays subscribed meanwhile, with nowhere to send.
  const raw = first.socket as unknown as { _socket: { end: () => unknown }; _closeFrameReceived: boolean };
  raw._socket.end = () => raw._socket;
  first.socket.close();
  expect(await waitUntil(() => raw._closeFrameReceived, 20_000)).toBe(true);
  await nodeCall(node, "evm_revert", [snapshot]);
  await mine(rt, 1);
  const kept = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  expect(
    await waitUntil(
      () =>
        watcher.notes.some((n) => n.result.transactionHash === doomed.transactionHash && n.result.removed) &&
        watcher.notes.some((n) => n.result.transactionHash === kept.transactionHash),
      20_000,
    ),
  ).toBe(true);
  const { got } = await resumedUntil(cursor, kept.transactionHash);
  expect(got).toEqual([
    [doomed.transactionHash, true],
    [kept.transactionHash, false],
  ]);
  first.socket.terminate();
  await watcher.close();
});

it("a logs stream resumed across a reorg whose fork is below every block it remembers replays from the real fork point", async () => {
  const emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE })).contractAddress!;
  const node = rt.devnet!.nodes[0]!.url;
  const snapshot = await nodeCall(node, "evm_snapshot");
  const first = await client(rt.url);
  expect(
    (await first.call("eth_subscribe", ["logs", { address: emitter, resumable: true }])).error,
  ).toBeUndefined();
  // A block without its logs, then one with: the stream remembers only the second.
  await mine(rt, 1);
  const { doomed, cursor } = await lastLogThenGone(first, emitter);
  // The fork is at the snapshot, below the block before the doomed log: the new chain has a log in
  // each of the two blocks above it, and a third after.
  await nodeCall(node, "evm_revert", [snapshot]);
  const early = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  const middle = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  const late = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  expect(Number(BigInt(middle.blockNumber))).toBe(Number(BigInt(doomed.blockNumber)));
  const { got, subscriptions, subscription } = await resumedUntil(cursor, late.transactionHash);
  expect(got).toEqual([
    [doomed.transactionHash, true],
    [early.transactionHash, false],
    [middle.transactionHash, false],
    [late.transactionHash, false],
  ]);
  for (const id of subscriptions) expect(id).toBe(subscription);
});

it("a live logs stream hears a reorg's new log at the height and index of the one it took back", async () => {
  const { emitter, node, first } = await emitterStream();
  const snapshot = await nodeCall(node, "evm_snapshot");
  const { doomed } = await lastLog(first, emitter);
  // The new chain's first log is in a block of the same height, at the same index (another
  // transaction: the same one sent again would be the same log).
  await nodeCall(node, "evm_revert", [snapshot]);
  const kept = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter, data: "0x01" });
  expect(kept.blockNumber).toBe(doomed.blockNumber);
  await mine(rt, 1);
  expect(
    await waitUntil(() => first.notes.some((n) => n.result.transactionHash === kept.transactionHash), 20_000),
  ).toBe(true);
  expect(first.notes.map((n) => [n.result.transactionHash, n.result.removed === true])).toEqual([
    [doomed.transactionHash, false],
    [doomed.transactionHash, true],
    [kept.transactionHash, false],
  ]);
  await first.close();
  // Resumed after the removal: the client has nothing of the old block, and only the new log comes.
  const afterRemoval = await resumedUntil(first.notes[1]!.cursor!, kept.transactionHash);
  expect(afterRemoval.got).toEqual([[kept.transactionHash, false]]);
});

it("a removal the socket took and lost comes again to the client that resumes from the log before it", async () => {
  const { emitter, node, first } = await emitterStream();
  const snapshot = await nodeCall(node, "evm_snapshot");
  const { doomed, cursor } = await lastLog(first, emitter);
  await nodeCall(node, "evm_revert", [snapshot]);
  const kept = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter, data: "0x01" });
  await mine(rt, 1);
  // The stream sent the removal and the new log; the client lost both with its connection.
  expect(
    await waitUntil(() => first.notes.some((n) => n.result.transactionHash === kept.transactionHash), 20_000),
  ).toBe(true);
  await first.close();
  const { got } = await resumedUntil(cursor, kept.transactionHash);
  expect(got).toEqual([
    [doomed.transactionHash, true],
    [kept.transactionHash, false],
  ]);
});

it("a live newHeads stream hears the new chain's header at a height it had already sent", async () => {
  const node = rt.devnet!.nodes[0]!.url;
  const first = await client(rt.url);
  expect((await first.call("eth_subscribe", ["newHeads", { resumable: true }])).error).toBeUndefined();
  const snapshot = await nodeCall(node, "evm_snapshot");
  await mine(rt, 1);
  expect(await waitUntil(() => first.notes.length >= 1, 20_000)).toBe(true);
  const replaced = first.notes.at(-1)!.result;
  // Another block at that height (a transaction in it: not the same block again), then one above.
  await nodeCall(node, "evm_revert", [snapshot]);
  const other = await sendAndWait(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT, data: "0x02" });
  expect(other.blockNumber).toBe(replaced.number);
  await mine(rt, 1);
  const above = Number(BigInt(replaced.number!)) + 1;
  expect(await waitUntil(() => first.notes.some((n) => numberOf(n) === above), 20_000)).toBe(true);
  const heads = first.notes.map((n) => [numberOf(n), n.result.hash]);
  const at = heads.findIndex(([, hash]) => hash === replaced.hash);
  expect(heads.slice(at)).toEqual([
    [numberOf(first.notes[at]!), replaced.hash],
    [numberOf(first.notes[at]!), other.blockHash],
    [above, expect.any(String)],
  ]);
  await first.close();
});
