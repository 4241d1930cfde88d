/** Fixes known node deviations from the execution-apis standard, so clients always see standard results. */

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * anvil adds a top-level `blockTimestamp` to receipts as a JSON number; the standard's receipt
 * schema has no such field (and no other field is a number), so strict clients reject it. The
 * value duplicates the block's timestamp, so dropping it loses nothing.
 */
export function standardReceipt(receipt: unknown): unknown {
  if (!isRecord(receipt) || typeof receipt.blockTimestamp !== "number") return receipt;
  const { blockTimestamp: _dropped, ...rest } = receipt;
  return rest;
}

/** The spec's envelope carries the protocol version as a string; anvil answers a bare JSON number. */
export const quantityText = (result: unknown): unknown =>
  typeof result === "number" && Number.isSafeInteger(result) && result >= 0
    ? `0x${result.toString(16)}`
    : result;

/**
 * Params put in the one form every node takes, after validation: storage keys of
 * eth_getStorageValues as 32-byte words (the schema allows "0x0"; reth and anvil refuse an odd digit count).
 */
export const storageKeysAsWords = ([requests, ...rest]: unknown[]): unknown[] => [
  Object.fromEntries(
    Object.entries(requests as Record<string, string[]>).map(([address, slots]) => [
      address,
      slots.map((slot) => `0x${slot.slice(2).padStart(64, "0")}`),
    ]),
  ),
  ...rest,
];
