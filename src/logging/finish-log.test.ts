/** The log's last lines at exit: written when the reader takes them, dropped after the bound when it has stopped. */
import { once } from "node:events";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { waitUntil } from "../test-support/cli.js";
import { openFifo } from "../test-support/fifo.js";
import { createLogger } from "./create-logger.js";
import { finishLog } from "./finish-log.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** pino's own asynchronous destination on a real pipe (a FIFO) that nobody reads until told to. */
async function loggerOnFifo() {
  const fifo = openFifo("chaingate-finish-log-");
  const destination = pino.destination({ dest: fifo.path, sync: false });
  cleanups.push(() => {
    destination.destroy();
    fifo.close();
  });
  await once(destination, "ready");
  return { logger: createLogger("info", destination), destination, read: fifo.read };
}

/** Whether SonicBoom was ended (its type does not show the field). */
const ended = (destination: object) => (destination as { destroyed?: boolean }).destroyed;

/** Far more than the pipe holds (64 KiB): about 1 MB of lines, numbered. */
function logMany(logger: pino.Logger, count = 5_000) {
  const padding = "x".repeat(150);
  for (let i = 0; i < count; i++) logger.info({ n: i, padding }, "line");
}

it("answers at once when nothing is queued", async () => {
  const { logger, destination } = await loggerOnFifo();
  expect(await finishLog(logger, 60_000)).toBe(true);
  expect(ended(destination)).toBe(false);
});

it("waits for a reader that takes the lines, and everything arrives", async () => {
  const { logger, destination, read } = await loggerOnFifo();
  logMany(logger);
  // The reader keeps reading while the log finishes: every line arrives, in order.
  const reading = setInterval(read, 5);
  cleanups.push(() => clearInterval(reading));
  expect(await finishLog(logger, 60_000)).toBe(true);
  expect(ended(destination)).toBe(false);
  await waitUntil(() => read().endsWith('"msg":"line"}\n') && read().includes('"n":4999,'), 20_000);
  const numbers = read()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { n: number }).n);
  expect(numbers).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
});

it("drops what a stopped reader has not taken after the bound, so the exit's own flush has nothing to wait on", async () => {
  const { logger, destination, read } = await loggerOnFifo();
  logMany(logger);
  expect(await finishLog(logger, 300)).toBe(false);
  expect(ended(destination)).toBe(true);
  // What pino does at exit for an asynchronous destination (it skips one that was ended): before
  // this bound, this call retried EAGAIN every 100 ms for as long as the pipe stayed full.
  expect(() => destination.flushSync()).toThrow(/destroyed/);
  // The pipe holds what it took before the bound: whole lines from the first, then a cut.
  const lines = read().split("\n");
  expect(lines.length).toBeGreaterThan(1);
  expect(lines.length).toBeLessThan(5_000);
  expect((JSON.parse(lines[0]!) as { n: number }).n).toBe(0);
});
