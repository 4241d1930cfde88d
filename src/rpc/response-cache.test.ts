import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { devSend, mine, receiptOf, result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { suiteRuntime } from "../test-support/test-runtime.js";
import { envelopeParts, resultJsonText } from "../upstream/json-text.js";
import { METHODS_BY_NAME } from "./method-table.js";
import { ENTRY_OVERHEAD_BYTES, ResponseCache } from "./response-cache.js";

// The heap test collects garbage before it measures.
setFlagsFromString("--expose-gc");

const spec = (name: string) => METHODS_BY_NAME.get(name)!;

describe("response cache rules", () => {
  it("keeps immutable answers, never a null; joins identical calls in flight", async () => {
    const cache = new ResponseCache(1024 * 1024);
    let calls = 0;
    const fetch = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 20));
      return { hash: "0xabc" };
    };
    const params = [`0x${"1".repeat(64)}`, false];
    await Promise.all(
      Array.from({ length: 10 }, () => cache.get(1, 5, spec("eth_getBlockByHash"), params, fetch)),
    );
    expect(calls).toBe(1);
    await cache.get(1, 6, spec("eth_getBlockByHash"), params, fetch);
    expect(calls).toBe(1);
    let nulls = 0;
    const missing = async () => {
      nulls++;
      return null;
    };
    await cache.get(1, 6, spec("eth_getTransactionReceipt"), [`0x${"2".repeat(64)}`], missing);
    await cache.get(1, 6, spec("eth_getTransactionReceipt"), [`0x${"2".repeat(64)}`], missing);
    expect(nulls).toBe(2);
  });

  it("lets go of a call that failed: the next identical call asks again", async () => {
    const cache = new ResponseCache(1024 * 1024);
    let calls = 0;
    const failing = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      throw new Error("node down");
    };
    const params = [`0x${"3".repeat(64)}`, false];
    const joined = Array.from({ length: 5 }, () =>
      cache.get(1, 5, spec("eth_getBlockByHash"), params, failing),
    );
    for (const call of joined) await expect(call).rejects.toThrow("node down");
    expect(calls).toBe(1);
    await expect(cache.get(1, 5, spec("eth_getBlockByHash"), params, failing)).rejects.toThrow("node down");
    expect(calls).toBe(2);
    const answered = await cache.get(1, 5, spec("eth_getBlockByHash"), params, async () => ({
      hash: "0xdef",
    }));
    expect(answered.text).toBe('{"hash":"0xdef"}');
  });

  it("reuses 'latest' answers only for the head they were read at, and never 'pending' ones", async () => {
    const cache = new ResponseCache(1024 * 1024);
    let calls = 0;
    const fetch = async () => `0x${(++calls).toString(16)}`;
    const latest = [DEV_ACCOUNT, "latest"];
    expect((await cache.get(1, 10, spec("eth_getBalance"), latest, fetch)).text).toBe('"0x1"');
    expect((await cache.get(1, 10, spec("eth_getBalance"), latest, fetch)).text).toBe('"0x1"');
    expect((await cache.get(1, 11, spec("eth_getBalance"), latest, fetch)).text).toBe('"0x2"');
    expect((await cache.get(1, undefined, spec("eth_getBalance"), latest, fetch)).text).toBe('"0x3"');
    const pending = [DEV_ACCOUNT, "pending"];
    await cache.get(1, 11, spec("eth_getBalance"), pending, fetch);
    await cache.get(1, 11, spec("eth_getBalance"), pending, fetch);
    expect(calls).toBe(5);
  });

  it("treats a block number as final only deep below the head, and an index is not a block", async () => {
    const cache = new ResponseCache(1024 * 1024);
    let calls = 0;
    const fetch = async () => ({ n: ++calls });
    const byNumberAndIndex = spec("eth_getTransactionByBlockNumberAndIndex");
    await cache.get(1, 100, byNumberAndIndex, ["latest", "0x0"], fetch);
    await cache.get(1, 101, byNumberAndIndex, ["latest", "0x0"], fetch);
    expect(calls).toBe(2);
    await cache.get(1, 100, byNumberAndIndex, ["0x5", "0x0"], fetch);
    await cache.get(1, 101, byNumberAndIndex, ["0x5", "0x0"], fetch);
    expect(calls).toBe(3);
    await cache.get(1, 100, byNumberAndIndex, ["0x60", "0x0"], fetch);
    await cache.get(1, 101, byNumberAndIndex, ["0x60", "0x0"], fetch);
    expect(calls).toBe(5);
  });

  it("stays within its memory budget", async () => {
    const cache = new ResponseCache(10_000);
    for (let i = 0; i < 200; i++) {
      await cache.get(
        1,
        1,
        spec("eth_getBlockByHash"),
        [`0x${i.toString(16).padStart(64, "0")}`, false],
        async () => "x".repeat(500),
      );
    }
    // Each answer counts its characters and what holding it costs besides (the key's too).
    expect(cache.size).toBeLessThanOrEqual(Math.floor(10_000 / (500 + ENTRY_OVERHEAD_BYTES)));
    expect(cache.size).toBeGreaterThan(0);
  });

  it("holds about its budget of heap, however small its answers", async () => {
    const gc = runInNewContext("gc") as () => void;
    const budget = 8 * 1024 * 1024;
    const cache = new ResponseCache(budget);
    const balance = spec("eth_getBalance");
    // Three budgets' worth of balances, as distinct reads bring them, each answer read from a
    // node's bytes as the upstream reads it (a kept result once held the node's whole answer).
    for (let i = 0; i < 60_000; i++) {
      const address = `0x${(0x1_0000_0000 + i).toString(16).padStart(40, "0")}`;
      const answer = Buffer.from(
        `{"jsonrpc":"2.0","id":${i},"result":"0x${(10n ** 20n + BigInt(i)).toString(16)}"}`,
      );
      const read = async () => resultJsonText(envelopeParts(answer.toString("latin1")).result!, answer, true);
      await cache.get(1, 1, balance, [address, "latest"], read);
    }
    // What the cache holds is what collecting it frees (whatever else the process does meanwhile).
    gc();
    const full = process.memoryUsage().heapUsed;
    cache.clear();
    gc();
    const held = full - process.memoryUsage().heapUsed;
    // Counted by characters alone, the same cache held 4.6 times its budget; with each result a
    // slice of the node's answer and a smaller overhead counted, 1.44 times (decision 233).
    expect(held).toBeLessThan(budget * 1.15);
    expect(held).toBeGreaterThan(budget * 0.5);
  });

  it("evicts the oldest answers first, and spares one read since (second chance)", async () => {
    // Room for three 500-character answers (with their keys and overhead), not four.
    const cache = new ResponseCache(3 * (600 + ENTRY_OVERHEAD_BYTES));
    const hash = (i: number) => [`0x${i.toString(16).padStart(64, "0")}`, false];
    const block = spec("eth_getBlockByHash");
    const put = (i: number) => cache.get(1, 1, block, hash(i), async () => `${i}`.padEnd(500, "x"));
    await put(1);
    await put(2);
    await put(3);
    expect(cache.slot(1, 1, block, hash(1)).hit).toBeDefined();
    await put(4);
    // 2 was the oldest not read since: gone; 1 was read, so spared.
    expect(cache.slot(1, 1, block, hash(2)).hit).toBeUndefined();
    expect(cache.slot(1, 1, block, hash(1)).hit?.text.startsWith('"1')).toBe(true);
    expect(cache.slot(1, 1, block, hash(3)).hit).toBeDefined();
    expect(cache.slot(1, 1, block, hash(4)).hit).toBeDefined();
    // Now 3, 4 and 1 (spared, so moved last) were all read: the next store passes over each once,
    // never over the answer it stores, and evicts the oldest of them on the second pass.
    await put(5);
    expect(cache.size).toBe(3);
    expect(cache.slot(1, 1, block, hash(3)).hit).toBeUndefined();
    for (const i of [1, 4, 5]) expect(cache.slot(1, 1, block, hash(i)).hit).toBeDefined();
    // An answer larger than the whole budget is not kept, and evicts nothing.
    await cache.get(1, 1, block, hash(6), async () => "y".repeat(2_600));
    expect(cache.slot(1, 1, block, hash(6)).hit).toBeUndefined();
    expect(cache.size).toBe(3);
  });
});

describe("answers kept for a head", () => {
  const balance = spec("eth_getBalance");
  const address = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
  const latest = (i: number) => [address(i), "latest"];

  it("are dropped once a newer head's answer of the same chain is kept, and a late one is not kept", async () => {
    const cache = new ResponseCache(1024 * 1024);
    const put = (chainId: number, head: number, i: number) =>
      cache.get(chainId, head, balance, latest(i), async () => `0x${head.toString(16)}`);
    const forever = [`0x${"a".repeat(64)}`, false];
    await cache.get(1, 10, spec("eth_getBlockByHash"), forever, async () => ({ hash: "0xa" }));
    for (const i of [1, 2, 3]) await put(1, 10, i);
    await put(2, 10, 1);
    expect(cache.size).toBe(5);
    // A fetch begun at head 10 that ends after the chain's first answer at head 11 is kept.
    let late: (value: string) => void = () => {};
    const slow = cache.get(1, 10, balance, latest(9), () => new Promise<string>((r) => (late = r)));
    await put(1, 11, 4);
    // Chain 1's three answers for head 10 went; its block by hash and chain 2's answer stayed.
    expect(cache.size).toBe(3);
    expect(cache.slot(1, 10, balance, latest(1)).hit).toBeUndefined();
    expect(cache.slot(2, 10, balance, latest(1)).hit?.text).toBe('"0xa"');
    expect(cache.slot(1, 11, spec("eth_getBlockByHash"), forever).hit).toBeDefined();
    expect(cache.slot(1, 11, balance, latest(4)).hit?.text).toBe('"0xb"');
    late("0x9");
    expect((await slow).text).toBe('"0x9"');
    expect(cache.size).toBe(3);
    expect(cache.slot(1, 10, balance, latest(9)).hit).toBeUndefined();
    // After a clear (a head that went back), a lower head is kept again.
    cache.clear();
    await put(1, 5, 1);
    expect(cache.slot(1, 5, balance, latest(1)).hit?.text).toBe('"0x5"');
  });

  it("give their room back: answers still good are not evicted for them", async () => {
    // Room for three 500-character answers (with their keys and overhead), not four.
    const cache = new ResponseCache(3 * (600 + ENTRY_OVERHEAD_BYTES));
    const block = spec("eth_getBlockByHash");
    const hash = [`0x${"b".repeat(64)}`, false];
    await cache.get(1, 1, block, hash, async () => "f".padEnd(500, "x"));
    const put = (head: number, i: number) =>
      cache.get(1, head, spec("eth_call"), [{ to: address(i), data: "0x" }, "latest"], async () =>
        `${head}`.padEnd(500, "x"),
      );
    await put(1, 1);
    await put(1, 2);
    // The block by hash is the oldest and was never read: without the head's drop it would go first.
    await put(2, 3);
    await put(2, 4);
    expect(cache.size).toBe(3);
    expect(cache.slot(1, 2, block, hash).hit?.text.startsWith('"f')).toBe(true);
  });

  it("are evicted by the budget as any answer is, and their chain's next head drops only what is left", async () => {
    const cache = new ResponseCache(20_000);
    for (let i = 0; i < 200; i++) await cache.get(1, 7, balance, latest(i), async () => "x".repeat(100));
    const kept = cache.size;
    expect(kept).toBeLessThan(200);
    for (let i = 0; i < 200 - kept; i++)
      expect(cache.slot(1, 7, balance, latest(i)).hit, `answer ${i}`).toBeUndefined();
    await cache.get(1, 8, balance, latest(0), async () => "0x8");
    expect(cache.size).toBe(1);
    expect(cache.slot(1, 8, balance, latest(0)).hit?.text).toBe('"0x8"');
  });
});

describe("eviction over answers that never change and every chain's head answers", () => {
  /**
   * What the cache must do, written plainly: one list of every kept answer stamped in the order it
   * was kept; eviction drops the oldest stamp first but restamps, once, one read since and the
   * answer being stored; a chain's newer head drops that chain's head answers at once.
   */
  class Model {
    private clock = 0;
    private readonly kept = new Map<
      string,
      { stamp: number; used: boolean; cost: number; chain: number; head?: number }
    >();
    private readonly heads = new Map<number, number>();
    private bytes = 0;
    constructor(private readonly max: number) {}
    get size() {
      return this.kept.size;
    }
    /** A lookup: true when it is answered from what is kept. */
    get(key: string, chain: number, head: number | undefined, cost: number): boolean {
      const entry = this.kept.get(key);
      if (entry && entry.head === head) {
        entry.used = true;
        return true;
      }
      if (cost > this.max) return false;
      if (head !== undefined) {
        const current = this.heads.get(chain);
        if (current !== undefined && head < current) return false;
        if (current !== head)
          for (const [k, e] of this.kept)
            if (e.chain === chain && e.head !== undefined) {
              this.kept.delete(k);
              this.bytes -= e.cost;
            }
        this.heads.set(chain, head);
      }
      const old = this.kept.get(key);
      if (old) this.bytes -= old.cost;
      this.kept.set(key, {
        stamp: ++this.clock,
        used: false,
        cost,
        chain,
        ...(head === undefined ? {} : { head }),
      });
      this.bytes += cost;
      while (this.bytes > this.max) {
        const [oldest, e] = [...this.kept].reduce((a, b) => (b[1].stamp < a[1].stamp ? b : a));
        if (e.used || oldest === key) {
          e.used = false;
          e.stamp = ++this.clock;
        } else {
          this.kept.delete(oldest);
          this.bytes -= e.cost;
        }
      }
      return false;
    }
  }

  it("keeps and drops what one ordered list would, whatever the reads and heads", async () => {
    const block = spec("eth_getBlockByHash");
    const balance = spec("eth_getBalance");
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("block" as const),
        i: fc.nat(6),
        size: fc.integer({ min: 1, max: 600 }),
      }),
      fc.record({
        kind: fc.constant("balance" as const),
        chain: fc.constantFrom(1, 2),
        i: fc.nat(6),
        size: fc.integer({ min: 1, max: 600 }),
      }),
      fc.record({ kind: fc.constant("head" as const), chain: fc.constantFrom(1, 2) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 120 }),
        fc.integer({ min: 1, max: 6 }),
        async (ops, room) => {
          const max = room * (300 + ENTRY_OVERHEAD_BYTES);
          const cache = new ResponseCache(max);
          const model = new Model(max);
          const heads = new Map([
            [1, 1],
            [2, 1],
          ]);
          for (const o of ops) {
            if (o.kind === "head") {
              heads.set(o.chain, heads.get(o.chain)! + 1);
              continue;
            }
            const chain = o.kind === "block" ? 1 : o.chain;
            const [method, params] =
              o.kind === "block"
                ? [block, [`0x${o.i.toString(16).padStart(64, "0")}`, false]]
                : [balance, [`0x${o.i.toString(16).padStart(40, "0")}`, "latest"]];
            const answer = "x".repeat(o.size);
            const key = cache.place(chain, method, params).key;
            const cost = key.length + JSON.stringify(answer).length + ENTRY_OVERHEAD_BYTES;
            const head = heads.get(chain)!;
            let fetched = false;
            await cache.get(chain, head, method, params, async () => {
              fetched = true;
              return answer;
            });
            expect(!fetched, `${o.kind} ${chain} ${o.i} at ${head}`).toBe(
              model.get(key, chain, o.kind === "block" ? undefined : head, cost),
            );
            expect(cache.size).toBe(model.size);
          }
        },
      ),
      {
        numRuns: 1000,
        // A spared answer restamped, or its shelf's hand would offer it as the oldest of all.
        examples: [
          [
            [
              { kind: "balance", chain: 1, i: 5, size: 1 },
              { kind: "balance", chain: 1, i: 5, size: 1 },
              { kind: "balance", chain: 2, i: 0, size: 196 },
              { kind: "block", i: 0, size: 232 },
            ],
            2,
          ],
        ],
      },
    );
  });
});

describe("cached answers through the gateway stay correct", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_HEAD_POLL_MS: "50" } });

  it("a balance read right after a send through the gateway shows the send", async () => {
    for (let i = 0; i < 5; i++) {
      const before = BigInt(await result<string>(rt, "eth_getBalance", [DEV_ACCOUNT_2, "latest"]));
      const hash = await devSend(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x7" });
      await receiptOf(rt, hash);
      const after = BigInt(await result<string>(rt, "eth_getBalance", [DEV_ACCOUNT_2, "latest"]));
      expect(after - before).toBe(7n);
    }
  });

  it("a block made elsewhere is seen within the head poll interval", async () => {
    const before = Number(await result<string>(rt, "eth_blockNumber"));
    await mine(rt, 1);
    await new Promise((r) => setTimeout(r, 150));
    expect(Number(await result<string>(rt, "eth_blockNumber"))).toBe(before + 1);
  });
});
