import { afterAll, beforeAll, expect, it } from "vitest";
import { receiptOf } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import type { TransferRecord } from "./list-transfers.js";

let rt: TestRuntime;
const anvil = async (method: string, params: unknown[] = []) => {
  const response = await fetch(rt.devnet!.nodes[0]!.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
};

beforeAll(async () => {
  rt = await startTestRuntime({
    env: { CHAINGATE_TRACKER_INTERVAL_MS: "100", CHAINGATE_REPLACE_AFTER_SECONDS: "1" },
  });
});
afterAll(async () => {
  await rt?.close();
});

/** A transfer from a new wallet, sent while the node mines nothing (automine off). */
async function sendUnmined(value: string): Promise<{ walletId: string; original: string }> {
  const { json } = await rt.post("/wallet", { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 });
  const walletId = (json as { id: string }[])[0]!.id;
  const sent = await rt.post("/transaction", {
    wallet_id: walletId,
    password: "pw",
    transaction: { to: DEV_ACCOUNT_2, value },
  });
  expect(sent.status).toBe(200);
  return { walletId, original: (sent.json as { tx_hash: string }).tx_hash };
}

it("a transaction stuck in the pool is replaced with higher fees, and the replacement is what gets mined", async () => {
  await anvil("evm_setAutomine", [false]);
  try {
    const { walletId, original } = await sendUnmined("5");

    let records: TransferRecord[] = [];
    for (let i = 0; i < 60; i++) {
      const list = await rt.post("/list_all_transfers", { wallet_id: walletId });
      records = (list.json as { result: { transfers: TransferRecord[] } }).result.transfers;
      if (records.some((r) => r.state === "replaced")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const old = records.find((r) => r.tx_hash === original)!;
    const replacement = records.find((r) => r.tx_hash !== original)!;
    expect(old.state).toBe("replaced");
    expect(old.replaced_by).toBe(replacement.tx_hash);
    expect(replacement.nonce).toBe(old.nonce);
    expect(replacement.value).toBe("5");

    await anvil("evm_mine");
    const receipt = await receiptOf(rt, replacement.tx_hash);
    expect(receipt.status).toBe("0x1");
    const node = (await anvil("eth_getTransactionByHash", [replacement.tx_hash])) as { maxFeePerGas: string };
    const first = (await anvil("eth_getTransactionReceipt", [original])) as unknown;
    expect(first).toBeNull();
    expect(BigInt(node.maxFeePerGas)).toBeGreaterThan(0n);
    for (let i = 0; i < 50; i++) {
      const list = await rt.post("/list_all_transfers", { wallet_id: walletId });
      records = (list.json as { result: { transfers: TransferRecord[] } }).result.transfers;
      if (records.find((r) => r.tx_hash === replacement.tx_hash)?.state === "confirmed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(records.find((r) => r.tx_hash === replacement.tx_hash)?.state).toBe("confirmed");
    expect(records.find((r) => r.tx_hash === original)?.state).toBe("replaced");
  } finally {
    await anvil("evm_setAutomine", [true]);
  }
});

it("a fee bump above a policy's fee cap is not sent: the transaction is reported stuck, the refusal audited", async () => {
  await anvil("evm_setAutomine", [false]);
  try {
    const { walletId, original } = await sendUnmined("6");
    const pooled = (await anvil("eth_getTransactionByHash", [original])) as { maxFeePerGas: string };
    // The cap is the fee it was sent with: any bump is above it.
    const policy = await rt.post("/policies", {
      name: "fee cap",
      wallet_id: walletId,
      rules: { max_fee_per_gas: BigInt(pooled.maxFeePerGas).toString() },
    });
    expect(policy.status, JSON.stringify(policy.json)).toBe(200);

    let records: TransferRecord[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const list = await rt.post("/list_all_transfers", { wallet_id: walletId });
      records = (list.json as { result: { transfers: TransferRecord[] } }).result.transfers;
      if (records[0]?.error?.startsWith("stuck:")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ tx_hash: original, state: "sent" });
    expect(records[0]!.error).toMatch(/^stuck: refused by policy "fee cap" \(rule max_fee_per_gas\)/);
    const audit = await fetch(`${rt.url}/audit?wallet_id=${walletId}&decision=denied`);
    const { entries } = (await audit.json()) as { entries: { operation: string; rule: string }[] };
    expect(entries[0]).toMatchObject({ operation: "replacement", rule: "max_fee_per_gas" });

    await anvil("evm_mine");
    expect((await receiptOf(rt, original)).status).toBe("0x1");
    const cleared = async () => {
      const list = await rt.post("/list_all_transfers", { wallet_id: walletId });
      const [record] = (list.json as { result: { transfers: TransferRecord[] } }).result.transfers;
      return record?.state === "confirmed" && record.error === null;
    };
    const until = Date.now() + 60_000;
    while (!(await cleared()) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await cleared()).toBe(true);
  } finally {
    await anvil("evm_setAutomine", [true]);
  }
});
