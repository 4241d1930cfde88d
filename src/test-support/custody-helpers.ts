/** A new custody wallet for a test: its addresses given 10 ETH on the devnet, and unlocked for the signer methods unless asked not to. */
import { type Hex, toHex } from "viem";
import { expect } from "vitest";
import { type Envelope, nodeCall, nodeUrlOf } from "./chain-helpers.js";
import type { TestRuntime } from "./test-runtime.js";

export interface FundedCustody {
  id: string;
  /** The first address (index 0). */
  address: Hex;
  addresses: Hex[];
}

export async function fundedCustody(
  rt: TestRuntime,
  options: {
    password: string;
    /** Addresses in the wallet (default 1). */
    addresses?: number;
    /** personal_unlockAccount each address for 600 s (default true). */
    unlock?: boolean;
    /** The caller's headers (an API key). */
    headers?: Record<string, string>;
  },
): Promise<FundedCustody> {
  const { password, headers = {} } = options;
  const made = await rt.post(
    "/wallet",
    { type: "KEYSTORE_V3", password, address_quantity: options.addresses ?? 1 },
    headers,
  );
  expect(made.status, JSON.stringify(made.json)).toBe(200);
  const records = made.json as { id: string; address: Hex }[];
  for (const { address } of records) {
    await nodeCall(nodeUrlOf(rt), "anvil_setBalance", [address, toHex(10n ** 19n)]);
    if (options.unlock === false) continue;
    const unlocked = await rt.post(
      "/",
      { jsonrpc: "2.0", id: 1, method: "personal_unlockAccount", params: [address, password, 600] },
      headers,
    );
    expect((unlocked.json as Envelope).result, JSON.stringify(unlocked.json)).toBe(true);
  }
  return { id: records[0]!.id, address: records[0]!.address, addresses: records.map((r) => r.address) };
}
