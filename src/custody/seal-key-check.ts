/** Whether this instance's server key opens what the store holds sealed: an instance with another key must not take traffic. */
import type { Store } from "../store/database.js";
import type { SealKey } from "./seal-key.js";

/**
 * The problem with this instance's server key, or undefined: the store holds keys sealed (unattended
 * wallets, shared unlocks) under a key this instance does not have, or under none it has at all. Behind
 * a balancer such an instance would fail every such signature it is sent.
 */
export async function sealKeyProblem(store: Store, key: SealKey | undefined): Promise<string | undefined> {
  const ids = new Set<string>();
  for (const table of ["unattended_keys", "unlocks"] as const) {
    const rows = await store.db
      .selectFrom(table)
      .select("key_id")
      .distinct()
      .where("key_id", "is not", null)
      .execute();
    for (const row of rows) if (row.key_id !== null) ids.add(row.key_id);
  }
  if (ids.size === 0) return undefined;
  if (key === undefined)
    return "the store holds keys sealed under a server key, and this instance has none: start it with the same CHAINGATE_SEAL_KEY_FILE as the others";
  if (!ids.has(key.id))
    return `this instance's server key (id ${key.id}) is not the one the store's sealed keys were sealed under (${[...ids].join(", ")}): every instance must share the same server key`;
  return undefined;
}
