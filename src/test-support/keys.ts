/** Waiting for API keys made in a test to be in force (the key ring re-reads the store twice a second). */
import { expect } from "vitest";
import { waitUntil } from "./cli.js";
import type { TestRuntime } from "./test-runtime.js";

/**
 * Until a keyless call is refused and every given key is accepted: the first alone is not enough,
 * since a read between two key creations knows the first key only, and a key made 250 ms after a
 * read is refused until the next one.
 */
export async function keysInForce(rt: TestRuntime, keys: readonly string[]): Promise<void> {
  const accepted = async (key: string) =>
    (await fetch(`${rt.url}/eth_chainId`, { method: "POST", headers: { authorization: `Bearer ${key}` } }))
      .status === 200;
  expect(
    await waitUntil(
      async () =>
        (await fetch(`${rt.url}/eth_chainId`, { method: "POST" })).status === 401 &&
        (await Promise.all(keys.map(accepted))).every(Boolean),
      20_000,
    ),
    "the API keys made by the test are in force",
  ).toBe(true);
}
