/** A new custody wallet for a test: its addresses given 10 ETH on the devnet, and unlocked for the signer methods unless asked not to. */
import { type Hex, toHex } from "viem";
import { expect } from "vitest";
import { devSend, type Envelope, nodeCall, nodeUrlOf } from "./chain-helpers.js";
import { waitUntil } from "./cli.js";
import { DEV_ACCOUNT_2 } from "./evm-fixtures.js";
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

/**
 * A new custody wallet of one address on a node with no `anvil_setBalance` (Hardhat, Ganache):
 * 1 ETH sent to it from the node's dev account on `chainId`, its receipt waited for.
 */
export async function walletFundedOn(
  rt: TestRuntime,
  nodeUrl: string,
  chainId: number,
  password: string,
): Promise<{ id: string; address: string }> {
  const made = await rt.post("/wallet", { type: "KEYSTORE_V3", password, address_quantity: 1 });
  const [wallet] = made.json as { id: string; address: string }[];
  const funding = await devSend(
    rt,
    { to: wallet!.address, value: toHex(10n ** 18n) },
    `?chain_id=${chainId}`,
    nodeUrl,
  );
  expect(
    await waitUntil(
      async () => (await nodeCall(nodeUrl, "eth_getTransactionReceipt", [funding])) !== null,
      20_000,
    ),
  ).toBe(true);
  return wallet!;
}

/** `POST /transaction` of `value` wei to DEV_ACCOUNT_2 from a custody wallet's first address: the hash it answered 200 with. */
export async function sendTransfer(
  rt: TestRuntime,
  wallet: { id: string },
  password: string,
  value: string,
): Promise<string> {
  const sent = await rt.post("/transaction", {
    wallet_id: wallet.id,
    password,
    transaction: { to: DEV_ACCOUNT_2, value },
  });
  expect(sent.status, JSON.stringify(sent.json)).toBe(200);
  return (sent.json as { tx_hash: string }).tx_hash;
}

/**
 * `eth_signTransaction` of `value` wei to DEV_ACCOUNT_2 from the custody address `from`, at `nonce`
 * or the next one. Fixed fees: "the same payload" must not hang on the fee oracle moving between
 * two calls.
 */
export async function signTransfer(
  rt: TestRuntime,
  from: Hex,
  value: bigint,
  nonce?: number,
): Promise<Envelope> {
  const params = [
    {
      from,
      to: DEV_ACCOUNT_2,
      value: toHex(value),
      gas: "0x5208",
      maxFeePerGas: "0xb2d05e00",
      maxPriorityFeePerGas: "0x3b9aca00",
      ...(nonce === undefined ? {} : { nonce: toHex(nonce) }),
    },
  ];
  return (await rt.post("/", { jsonrpc: "2.0", id: 1, method: "eth_signTransaction", params }))
    .json as Envelope;
}

/**
 * What the simulation-gate tests start from: a "simulated" policy on `wallet` that lets no send move
 * more than 100 of `token` out (by its simulation), and the address unlocked for JSON-RPC signers.
 * `headers` authenticate as the wallet's admin.
 */
export async function guardedBySimulation(
  rt: TestRuntime,
  wallet: { id: string; address: Hex },
  token: Hex,
  password: string,
  headers: Record<string, string>,
): Promise<void> {
  const policy = await rt.post(
    "/policies",
    {
      name: "simulated",
      wallet_id: wallet.id,
      rules: { simulation: { max_token_outflow: [{ token, max: (100n * 10n ** 18n).toString() }] } },
    },
    headers,
  );
  expect(policy.status, JSON.stringify(policy.json)).toBe(200);
  const params = [wallet.address, password, 600];
  const unlocked = await rt.post(
    "/",
    { jsonrpc: "2.0", id: 1, method: "personal_unlockAccount", params },
    headers,
  );
  expect((unlocked.json as Envelope).result).toBe(true);
}

/** The record chaingate keeps of the transaction `hash` (it must exist). */
export function recordOf(rt: TestRuntime, hash: string) {
  return rt.store.db
    .selectFrom("transactions")
    .selectAll()
    .where("tx_hash", "=", hash)
    .executeTakeFirstOrThrow();
}
