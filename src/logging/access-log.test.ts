/** The access log: one pino-shaped line per request, secrets out of URLs, written in batches and on close. */
import { once } from "node:events";
import { hostname } from "node:os";
import fc from "fast-check";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { waitUntil } from "../test-support/cli.js";
import { openFifo } from "../test-support/fifo.js";
import { type AccessEntry, AccessLog } from "./access-log.js";
import { createLogger } from "./create-logger.js";

function capture(options?: ConstructorParameters<typeof AccessLog>[1]) {
  const writes: string[] = [];
  const log = new AccessLog({ write: (text: string) => void writes.push(text) }, options);
  const lines = () =>
    writes
      .join("")
      .split("\n")
      .filter((l) => l !== "");
  return { log, writes, lines };
}

const entry: AccessEntry = {
  id: "req-1",
  method: "POST",
  url: "/",
  status: 200,
  ms: 0.123456,
  remoteAddress: "127.0.0.1",
  key: "k_1",
  rpc: "eth_chainId",
};

describe("AccessLog", () => {
  it("writes one JSON line a request in pino's shape, with the request's fields", () => {
    const { log, lines } = capture();
    log.record(entry);
    log.flush();
    const [line] = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(line).toMatchObject({
      level: 30,
      pid: process.pid,
      reqId: "req-1",
      req: { method: "POST", url: "/", remoteAddress: "127.0.0.1" },
      res: { statusCode: 200 },
      responseTime: 0.123,
      key: "k_1",
      rpc: "eth_chainId",
      msg: "request",
    });
    expect(typeof line!.time).toBe("number");
  });

  it("holds lines until the batch is full, then writes them in one write", () => {
    const { log, writes, lines } = capture({ flushBytes: 2000, flushMs: 60_000 });
    for (let i = 0; i < 3; i++) log.record(entry);
    expect(writes).toEqual([]);
    for (let i = 0; i < 10; i++) log.record(entry);
    // About 220 bytes a line: 2,000 bytes hold several, and a write is whole lines.
    expect(writes.length).toBeGreaterThanOrEqual(1);
    expect(writes.length).toBeLessThanOrEqual(3);
    for (const text of writes) expect(text.endsWith("\n")).toBe(true);
    log.flush();
    expect(lines().length).toBe(13);
  });

  it("writes what it holds after the interval, without being asked", async () => {
    const { log, lines } = capture({ flushMs: 20 });
    log.record(entry);
    expect(await waitUntil(() => lines().length === 1, 10_000)).toBe(true);
  });

  it("writes a line longer than its batch whole, after the lines held, and non-ASCII URLs intact", () => {
    const { log, lines } = capture({ flushBytes: 1000, flushMs: 60_000 });
    log.record(entry);
    log.record({ ...entry, id: "long", url: `/${"é".repeat(2000)}` });
    log.record({ ...entry, id: "after" });
    log.flush();
    const parsed = lines().map((l) => JSON.parse(l) as { reqId: string; req: { url: string } });
    expect(parsed.map((l) => l.reqId)).toEqual(["req-1", "long", "after"]);
    expect(parsed[1]!.req.url).toBe(`/${"é".repeat(2000)}`);
  });

  it("keeps any caller-given id, address, key and method intact, line after line, each a single JSON line", () => {
    // Plain characters are written as they are, anything else escaped: both must read back the same.
    const field = fc.oneof(
      fc.stringMatching(/^[\w.:-]{0,130}$/),
      fc.string({ maxLength: 140 }),
      fc.string({ unit: "binary", maxLength: 20 }),
    );
    const shared = fc.oneof(
      { arbitrary: fc.constantFrom("127.0.0.1", "k_1", "eth_call", ""), weight: 3 },
      { arbitrary: field, weight: 1 },
    );
    // A URL without a query is written as it came (non-ASCII too: such a line is encoded as UTF-8).
    const path = fc.oneof(
      { arbitrary: fc.constant("/"), weight: 3 },
      { arbitrary: fc.string({ maxLength: 40 }).filter((p) => !p.includes("?")), weight: 1 },
    );
    fc.assert(
      fc.property(
        // Common values often, so that callers share some fields and differ in others.
        fc.array(fc.record({ id: field, remoteAddress: shared, key: shared, rpc: shared, path }), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.array(fc.nat(3), { maxLength: 8 }),
        (callers, order) => {
          // Lines of one log one after another, repeating some callers: each line says its own.
          const { log, lines } = capture();
          const sent = [0, ...order].map((i) => callers[i % callers.length]!);
          for (const { id, remoteAddress, key, rpc, path } of sent)
            log.record({ ...entry, id, url: path === "/" ? path : `/${path}`, remoteAddress, key, rpc });
          log.flush();
          const written = lines();
          expect(written.length).toBe(sent.length);
          written.forEach((line, i) => {
            const { id, remoteAddress, key, rpc, path } = sent[i]!;
            const parsed = JSON.parse(line) as Record<string, unknown>;
            const url = path === "/" ? path : `/${path}`;
            expect(parsed).toMatchObject({ reqId: id, req: { url, remoteAddress }, key, rpc });
          });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("writes a plain line byte for byte as pino's shape, its response time exact, in any batch size (property)", () => {
    const prefix = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":"`;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            id: fc.stringMatching(/^[\w.:-]{1,40}$/),
            ms: fc.oneof(
              fc.double({ min: 0, max: 1e9, noNaN: true }),
              fc.constantFrom(0, 0.0004, 0.0005, 1e-9, 999.9995),
            ),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        // Batches from smaller than one line (each written whole, alone) to many lines.
        fc.constantFrom(100, 300, 700, 64 * 1024),
        (entries, flushBytes) => {
          const { log, lines, writes } = capture({ flushBytes, flushMs: 60_000 });
          for (const { id, ms } of entries) log.record({ ...entry, id, ms });
          log.flush();
          const written = lines();
          expect(written.length).toBe(entries.length);
          for (const text of writes) expect(text.endsWith("\n")).toBe(true);
          written.forEach((line, i) => {
            const { id, ms } = entries[i]!;
            const parsed = JSON.parse(line) as { time: number; responseTime: number };
            expect(parsed.responseTime).toBe(Math.round(ms * 1000) / 1000);
            expect(line).toBe(
              `{"level":30,"time":${parsed.time},${prefix}${id}","responseTime":${Math.round(ms * 1000)}e-3,"req":{"method":"POST","url":"/","remoteAddress":"127.0.0.1"},"res":{"statusCode":200},"key":"k_1","rpc":"eth_chainId","msg":"request"}`,
            );
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it("redacts secret-looking query parameters and keeps any URL a single line", () => {
    fc.assert(
      // A path has no "?": the first one starts the query.
      fc.property(
        fc.string().filter((p) => !p.includes("?")),
        fc.string(),
        (path, secret) => {
          const { log, lines } = capture();
          log.record({
            ...entry,
            url: `/${path}?api_key=${encodeURIComponent(secret)}x&a=1`,
            key: undefined,
          });
          log.flush();
          const written = lines();
          expect(written.length).toBe(1);
          const parsed = JSON.parse(written[0]!) as { req: { url: string }; key?: string };
          expect(parsed.req.url.endsWith("?api_key=[redacted]&a=1")).toBe(true);
          expect(parsed.key).toBeUndefined();
        },
      ),
    );
  });

  it("is made only for a logger that writes info lines, and writes to that logger's destination", () => {
    expect(AccessLog.of(pino({ level: "warn" }))).toBeUndefined();
    const written: string[] = [];
    const log = AccessLog.of(createLogger("info", { write: (t: string) => void written.push(t) }));
    log!.record(entry);
    log!.flush();
    expect(written.join("")).toContain('"reqId":"req-1"');
  });

  it("drops whole batches while a pipe's reader has stopped, counts them, and says how many once it reads again", async () => {
    // pino's own destination on a real pipe (a FIFO) that nobody reads until the end.
    const fifo = openFifo("chaingate-access-log-");
    const destination = pino.destination({ dest: fifo.path, sync: false });
    try {
      await once(destination, "ready");
      const log = new AccessLog(destination, {
        flushBytes: 4096,
        flushMs: 60_000,
        maxBacklogBytes: 64 * 1024,
      });
      // About 230 bytes a line: over a megabyte, where the pipe holds 64 KiB and the log 64 KiB more.
      const sent = 5000;
      for (let i = 0; i < sent; i++) log.record({ ...entry, id: `r${i}` });
      log.flush();
      expect(log.droppedLines).toBeGreaterThan(sent / 2);
      const dropped = log.droppedLines;
      // Reading again: what was handed over arrives, then the one line that tells of the drop.
      let text = "";
      const readUntil = async (done: () => boolean) =>
        waitUntil(() => {
          text = fifo.read();
          return done();
        }, 20_000);
      expect(await readUntil(() => text.includes('"dropped"'))).toBe(true);
      // Lines written after the drain are written again, not dropped.
      log.record({ ...entry, id: "after" });
      log.flush();
      expect(await readUntil(() => text.includes('"reqId":"after"'))).toBe(true);
      const lines = text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { level: number; reqId?: string; dropped?: number; msg: string });
      const warnings = lines.filter((l) => l.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({
        dropped,
        msg: "access-log lines dropped: the log's reader fell behind",
      });
      const requests = lines.filter((l) => l.msg === "request").map((l) => l.reqId);
      // Every line is either read or counted, and whole batches go: what was read is in order.
      expect(requests.length - 1 + dropped).toBe(sent);
      expect(requests.at(-1)).toBe("after");
      const numbers = requests.slice(0, -1).map((id) => Number(id!.slice(1)));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(log.droppedLines).toBe(dropped);
    } finally {
      destination.end();
      fifo.close();
    }
  });
});
