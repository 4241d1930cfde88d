/** Sends of one turn recorded as one job: contiguous nonces per address, one audit entry each, no spend rows without a limit, and bytes handed out at a nonce sending the batch the one-by-one way. */
import { type Hex, keccak256, parseTransaction, toHex } from "viem";
import { expect, it } from "vitest";
import { type Envelope, nodeCall, nodeUrlOf, receiptOf } from "../test-support/chain-helpers.js";
import { fundedCustody, signTransfer } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore } from "../test-support/stores.js";
import { suiteRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "record-together-password";

describeEachStore("sends recorded together", (target) => {
  const rt = suiteRuntime({ store: target });
  const rpc = async (method: string, params: unknown[]) =>
    (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params })).json as Envelope;

  it("40 sends at once from two addresses: each address's nonces are 0..19 in one sequence, each send has its row and its audit entry, and no spend row is written without a limit", async () => {
    const wallet = await fundedCustody(rt, { password: PASSWORD, addresses: 2 });
    const before = { ...rt.pipeline.recorded };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        rt.post("/transaction", {
          wallet_id: wallet.id,
          password: PASSWORD,
          index: i % 2,
          transaction: { to: DEV_ACCOUNT_2, value: String(i + 1) },
        }),
      ),
    );
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    // Every one in a joined record: none was taken back to be recorded alone.
    expect(rt.pipeline.recorded.together - before.together).toBe(40);
    expect(rt.pipeline.recorded.alone - before.alone).toBe(0);
    const hashes = answers.map((a) => (a.json as { tx_hash: string }).tx_hash);
    const rows = await rt.store.db
      .selectFrom("transactions")
      .select(["from_address", "nonce", "tx_hash", "value"])
      .where("wallet_id", "=", wallet.id)
      .execute();
    expect(rows).toHaveLength(40);
    for (const address of wallet.addresses) {
      const nonces = rows
        .filter((r) => r.from_address.toLowerCase() === address.toLowerCase())
        .map((r) => r.nonce)
        .sort((a, b) => a - b);
      expect(nonces).toEqual(Array.from({ length: 20 }, (_, i) => i));
    }
    const audited = await rt.store.db
      .selectFrom("audit_log")
      .select("tx_hash")
      .where("wallet_id", "=", wallet.id)
      .where("decision", "=", "allowed")
      .execute();
    expect(audited.map((a) => a.tx_hash).sort()).toEqual([...hashes].sort());
    const spends = await rt.store.db
      .selectFrom("policy_spends")
      .select("id")
      .where("wallet_id", "=", wallet.id)
      .execute();
    expect(spends).toHaveLength(0);
    for (const hash of hashes) expect((await receiptOf(rt, hash)).status).toBe("0x1");
  });

  it("bytes handed out at the next nonces: a burst is recorded one by one, broadcasts them and goes past them, no nonce twice", async () => {
    const { address: from } = await fundedCustody(rt, { password: PASSWORD });
    const handed: Hex[] = [];
    for (const value of [1n, 2n]) {
      const signed = await signTransfer(rt, from, value);
      expect(signed.error, JSON.stringify(signed.error)).toBeUndefined();
      handed.push(signed.result as Hex);
    }
    expect(handed.map((raw) => parseTransaction(raw).nonce)).toEqual([0, 1]);
    const sent = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        rpc("eth_sendTransaction", [{ from, to: DEV_ACCOUNT_2, value: toHex(10 + i) }]),
      ),
    );
    for (const answer of sent) expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    const nonces: number[] = [];
    for (const hash of [...handed.map((raw) => keccak256(raw)), ...sent.map((s) => s.result as string)]) {
      expect((await receiptOf(rt, hash)).status).toBe("0x1");
      const tx = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionByHash", [hash])) as { nonce: string };
      nonces.push(Number(tx.nonce));
    }
    expect(nonces.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("bursts over five addresses in uneven numbers, the second with bytes handed out at one address's next nonce: every send mined, each address's nonces one sequence", async () => {
    const wallet = await fundedCustody(rt, { password: PASSWORD, addresses: 5 });
    // Address i sends i + 1 times a burst (15 in all), interleaved in one turn.
    const indexes = [0, 1, 2, 3, 4].flatMap((i) => Array.from({ length: i + 1 }, () => i));
    indexes.sort((a, b) => ((a * 7) % 5) - ((b * 7) % 5) || a - b);
    const burst = async (from: number) => {
      const answers = await Promise.all(
        indexes.map((index, i) =>
          rt.post("/transaction", {
            wallet_id: wallet.id,
            password: PASSWORD,
            index,
            transaction: { to: DEV_ACCOUNT_2, value: String(from + i) },
          }),
        ),
      );
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      for (const answer of answers)
        expect((await receiptOf(rt, (answer.json as { tx_hash: string }).tx_hash)).status).toBe("0x1");
    };
    await burst(100);
    // Address 3's next nonce (4) is handed out: the second burst goes past it.
    const signed = await signTransfer(rt, wallet.addresses[3]!, 1n);
    expect(signed.error, JSON.stringify(signed.error)).toBeUndefined();
    expect(parseTransaction(signed.result as Hex).nonce).toBe(4);
    await burst(200);
    const rows = await rt.store.db
      .selectFrom("transactions")
      .select(["from_address", "nonce"])
      .where("wallet_id", "=", wallet.id)
      .execute();
    for (const [i, address] of wallet.addresses.entries()) {
      const nonces = rows
        .filter((r) => r.from_address.toLowerCase() === address.toLowerCase())
        .map((r) => r.nonce)
        .sort((a, b) => a - b);
      const all = Array.from({ length: 2 * (i + 1) + (i === 3 ? 1 : 0) }, (_, n) => n);
      expect(nonces).toEqual(i === 3 ? all.filter((n) => n !== 4) : all);
      const count = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [address, "latest"])) as string;
      expect(Number(count)).toBe(all.length);
    }
  });
});
