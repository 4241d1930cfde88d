/** A stream's memory answers, on resume, exactly the removals a client had the logs of and did not get, log by log. */
import { expect, it } from "vitest";
import { suiteStore } from "../test-support/stores.js";
import {
  type Log,
  PendingRecords,
  readMemory,
  type StreamMemory,
  StreamRecorder,
} from "./stream-recorder.js";

// The recorder writes its stream's row (none here: the writes change nothing) to a real store.
const own = suiteStore("sqlite");

const log = (block: number, index: number): Log => ({
  blockNumber: `0x${block.toString(16)}`,
  blockHash: `0x${"b".repeat(63)}${block}`,
  logIndex: `0x${index.toString(16)}`,
  transactionHash: `0x${block}${index}`,
});
const removal = (l: Log): Log => ({ ...l, removed: true });

/**
 * Logs 5.0, 5.1 and 6.0 went out as notifications 1 to 3; a reorg took blocks 5 and 6 back, and
 * their three removals went out as 4, 5 and 6. Answers a recorder over a copy of that memory.
 */
function afterReorg(): () => StreamRecorder {
  const memory: StreamMemory = { blocks: [] };
  const recorder = new StreamRecorder(own.store, "s", memory, Date.now);
  recorder.note("logs", log(5, 0), 1);
  recorder.note("logs", log(5, 1), 2);
  recorder.note("logs", log(6, 0), 3);
  recorder.forget(removal(log(5, 0)), 4);
  recorder.removed(removal(log(5, 1)), 5);
  recorder.removed(removal(log(6, 0)), 6);
  expect(memory.blocks).toEqual([]);
  expect(memory.count).toBe(6);
  return () => new StreamRecorder(own.store, "s", structuredClone(memory), Date.now);
}

/** What a resume at `count` sends again: block and log index of each removal. */
const resent = (recorder: StreamRecorder, count: number) =>
  recorder
    .rewindTo(count)
    .flatMap((block) => block.logs.map((l) => `${block.n}.${Number(BigInt(l.logIndex!))}`));

it("a resume sends again exactly the removals of logs the client had and whose removal it did not get", () => {
  const copy = afterReorg();
  expect(resent(copy(), 6)).toEqual([]);
  expect(resent(copy(), 5)).toEqual(["6.0"]);
  // Between two removals of one block: only the one that did not reach the client.
  expect(resent(copy(), 4)).toEqual(["5.1", "6.0"]);
  expect(resent(copy(), 3)).toEqual(["5.0", "5.1", "6.0"]);
  // The client had only the first log: only its removal.
  expect(resent(copy(), 1)).toEqual(["5.0"]);
  expect(resent(copy(), 0)).toEqual([]);
});

it("a removal sent again is recorded log by log, and a resume that did not send it finds it again", () => {
  const recorder = afterReorg()();
  expect(resent(recorder, 4)).toEqual(["5.1", "6.0"]);
  // The resume failed before anything went out: the next one finds the same removals.
  expect(resent(recorder, 4)).toEqual(["5.1", "6.0"]);
  // This time one went out, as notification 5 of the new numbering, and the socket was lost.
  recorder.removed(removal(log(5, 1)), 5);
  expect(resent(recorder, 5)).toEqual(["6.0"]);
  // Numbers past the client's are given anew: what the old numbering sent after it does not count.
  recorder.removed(removal(log(6, 0)), 6);
  expect(resent(recorder, 6)).toEqual([]);
  expect(resent(recorder, 5)).toEqual(["6.0"]);
});

it("a resume forgets the logs that went out after the client's count: the replay sends them again", () => {
  const memory: StreamMemory = { blocks: [] };
  const recorder = new StreamRecorder(own.store, "s", memory, Date.now);
  recorder.note("logs", log(7, 0), 1);
  recorder.note("logs", log(7, 1), 2);
  recorder.note("logs", log(8, 0), 3);
  expect(recorder.rewindTo(2)).toEqual([]);
  expect(memory.blocks.map((b) => [b.n, b.logs?.length])).toEqual([[7, 2]]);
  expect(memory.count).toBe(2);
  recorder.rewindTo(1);
  expect(memory.blocks.map((b) => [b.n, b.logs?.length])).toEqual([[7, 1]]);
});

it("a flush writes every record not yet written at once, and waits for one already on its way (a stopping instance)", async () => {
  const id = `flush-${Date.now()}`;
  const now = Date.now();
  await own.store.db
    .insertInto("subscription_streams")
    .values({
      id,
      owner: "t",
      chain_id: 1,
      kind: "newHeads",
      criteria: "{}",
      recent: JSON.stringify({ blocks: [] }),
      created_at: now,
      updated_at: now,
    })
    .execute();
  const counted = async () =>
    readMemory(
      (
        await own.store.db
          .selectFrom("subscription_streams")
          .select("recent")
          .where("id", "=", id)
          .executeTakeFirstOrThrow()
      ).recent,
    ).count;
  const pending = new PendingRecords();
  const recorder = new StreamRecorder(own.store, id, { blocks: [] }, Date.now, pending);
  recorder.note("newHeads", { number: "0x5", hash: `0x${"a".repeat(64)}` }, 1);
  // Its own write would come 20 ms later: the flush writes it now.
  await pending.flush();
  expect(await counted()).toBe(1);
  // A write under way and a note after it: the flush waits for both, and the newer lands last.
  recorder.note("newHeads", { number: "0x6", hash: `0x${"b".repeat(64)}` }, 2);
  const first = recorder.write();
  recorder.note("newHeads", { number: "0x7", hash: `0x${"c".repeat(64)}` }, 3);
  await pending.flush();
  await first;
  expect(await counted()).toBe(3);
  // Nothing left to write: a flush has nothing to wait for.
  await pending.flush();
  expect(await counted()).toBe(3);
});
