import pino from "pino";
import { expect, it } from "vitest";
import { startPeriodic } from "./periodic-task.js";
import { createShutdown } from "./shutdown.js";

const logger = pino({ level: "silent" });
const waitFor = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return check();
};

it("runs a task repeatedly, never two passes at once, and a failing pass does not stop it", async () => {
  const shutdown = createShutdown(logger);
  let passes = 0;
  let inFlight = 0;
  let most = 0;
  startPeriodic(
    {
      name: "test task",
      everyMs: 2,
      run: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        passes++;
        await new Promise((r) => setTimeout(r, 10));
        inFlight--;
        if (passes === 2) throw new Error("one bad pass");
      },
    },
    { logger, shutdown },
  );
  expect(await waitFor(() => passes >= 4)).toBe(true);
  expect(most).toBe(1);
  await shutdown.run();
  await new Promise((r) => setTimeout(r, 20));
  const after = passes;
  await new Promise((r) => setTimeout(r, 30));
  expect(passes).toBe(after);
});

it("runs stop steps newest first, once, and goes on past a failing one", async () => {
  const shutdown = createShutdown(logger);
  const order: string[] = [];
  shutdown.add("first", () => {
    order.push("first");
  });
  shutdown.add("broken", () => {
    throw new Error("cannot stop");
  });
  shutdown.add("last", async () => {
    order.push("last");
  });
  await shutdown.run();
  await shutdown.run();
  expect(order).toEqual(["last", "first"]);
});

it("a second run while the first is under way ends when the first has run every step", async () => {
  const shutdown = createShutdown(logger);
  const order: string[] = [];
  let release!: () => void;
  shutdown.add("slow", () =>
    new Promise<void>((resolve) => (release = resolve)).then(() => {
      order.push("slow");
    }),
  );
  const first = shutdown.run();
  const second = shutdown.run().then(() => order.push("second ended"));
  await new Promise((r) => setImmediate(r));
  expect(order).toEqual([]);
  release();
  await Promise.all([first, second]);
  expect(order).toEqual(["slow", "second ended"]);
});
