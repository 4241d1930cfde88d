import { expect, it } from "vitest";
import { syncTimeoutMs } from "./send-raw.js";

const limits = { defaultMs: 2_000, maxMs: 60_000 };

it("a synchronous send waits the caller's timeout, the operator's default when none, and never past the ceiling", () => {
  expect(syncTimeoutMs(undefined, limits)).toBe(2_000);
  expect(syncTimeoutMs(0, limits)).toBe(2_000);
  expect(syncTimeoutMs("0x0", limits)).toBe(2_000);
  expect(syncTimeoutMs(1_500, limits)).toBe(1_500);
  expect(syncTimeoutMs("0x3e8", limits)).toBe(1_000);
  // Asked for longer than allowed: the ceiling, which bounds how long a caller can hold a wait.
  expect(syncTimeoutMs(86_400_000, limits)).toBe(60_000);
  expect(syncTimeoutMs("0xffffffff", limits)).toBe(60_000);
});
