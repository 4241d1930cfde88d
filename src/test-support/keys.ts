/** Waiting for API keys made in a test to be in force (the key ring re-reads the store twice a second). */
import type { Hex } from "viem";
import { expect } from "vitest";
import { ApiKeyStore } from "../auth/api-keys.js";
import type { ApiKeyRole } from "../store/schema.js";
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

/** API keys made in the store (a role for each name), in force when this answers: each name's key. */
export async function keysMade<const Name extends string>(
  rt: TestRuntime,
  roles: Record<Name, ApiKeyRole>,
): Promise<Record<Name, string>> {
  const store = new ApiKeyStore(rt.store);
  const made = {} as Record<Name, string>;
  for (const name of Object.keys(roles) as Name[]) made[name] = (await store.create(roles[name], name)).key;
  await keysInForce(rt, Object.values(made));
  return made;
}

/** An admin API key in force, and a one-address wallet it made with `password`. */
export async function adminAndWallet(
  rt: TestRuntime,
  password: string,
): Promise<{ admin: string; wallet: { id: string; address: Hex } }> {
  const { ops: admin } = await keysMade(rt, { ops: "admin" });
  const made = await rt.post(
    "/wallet",
    { type: "KEYSTORE_V3", password, address_quantity: 1 },
    { authorization: `Bearer ${admin}` },
  );
  expect(made.status, JSON.stringify(made.json)).toBe(200);
  return { admin, wallet: (made.json as { id: string; address: Hex }[])[0]! };
}
