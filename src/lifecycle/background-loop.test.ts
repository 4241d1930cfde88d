/** The shared background loop: one pass at a time, a pause between, woken early, stopped with its pass awaited. */
import { expect, it } from "vitest";
import { BackgroundLoop } from "./background-loop.js";

const waitFor = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return check();
};

function recorder() {
  const warnings: unknown[] = [];
  return { warnings, logger: { warn: (fields: unknown) => void warnings.push(fields) } };
}

it("runs passes one at a time, goes on after a failed one (logged with its name), and stop waits for the running pass", async () => {
  const { warnings, logger } = recorder();
  let passes = 0;
  let inFlight = 0;
  let most = 0;
  let release: (() => void) | undefined;
  const loop = new BackgroundLoop({
    name: "test pass",
    everyMs: 1,
    logger,
    pass: async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      passes++;
      if (passes === 2) {
        inFlight--;
        throw new Error("one bad pass");
      }
      if (passes === 5) await new Promise<void>((r) => (release = r));
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
    },
  });
  loop.start();
  expect(await waitFor(() => release !== undefined)).toBe(true);
  expect(most).toBe(1);
  expect(warnings).toEqual([expect.objectContaining({ task: "test pass" })]);
  let stopped = false;
  const stopping = loop.stop().then(() => {
    stopped = true;
  });
  await new Promise((r) => setTimeout(r, 20));
  // The fifth pass is still running: stop has not returned, and no sixth starts.
  expect(stopped).toBe(false);
  release!();
  await stopping;
  const after = passes;
  await new Promise((r) => setTimeout(r, 30));
  expect(passes).toBe(after);
});

it("wake runs the next pass at once, or right after the running one; stop aborts the pass's signal; a restart runs again", async () => {
  const { logger } = recorder();
  const starts: number[] = [];
  let signal: AbortSignal | undefined;
  const loop = new BackgroundLoop({
    name: "woken",
    everyMs: 60_000,
    logger,
    pass: async (s) => {
      signal = s;
      starts.push(Date.now());
    },
  });
  loop.start();
  expect(await waitFor(() => starts.length === 1)).toBe(true);
  // The pause is a minute: only a wake brings the next pass.
  loop.wake();
  expect(await waitFor(() => starts.length === 2)).toBe(true);
  await loop.stop();
  expect(signal?.aborted).toBe(true);
  loop.wake();
  await new Promise((r) => setTimeout(r, 20));
  expect(starts.length).toBe(2);
  loop.start();
  expect(await waitFor(() => starts.length === 3)).toBe(true);
  expect(signal?.aborted).toBe(false);
  await loop.stop();
});

it('firstAfterMs "now" begins the first pass within start() itself', async () => {
  const { logger } = recorder();
  let begun = 0;
  const loop = new BackgroundLoop({
    name: "now",
    everyMs: 60_000,
    firstAfterMs: "now",
    logger,
    pass: () => {
      begun++;
    },
  });
  loop.start();
  expect(begun).toBe(1);
  await loop.stop();
});
