import { type Hex, keccak256, parseTransaction } from "viem";
import { expect, it } from "vitest";
import { type Envelope, nodeCall, nodeUrlOf, receiptOf } from "../test-support/chain-helpers.js";
import { fundedCustody, signTransfer } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore } from "../test-support/stores.js";
import { suiteRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "nonce-guard-password";

describeEachStore("the nonce-conflict guard", (target) => {
  const rt = suiteRuntime({ store: target });
  const rpc = async (method: string, params: unknown[]) =>
    (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params })).json as Envelope;

  /** A funded, unlocked custody address of its own, so each test owns its nonces. */
  const custodyAddress = async (): Promise<Hex> => (await fundedCustody(rt, { password: PASSWORD })).address;

  const signAt = (from: Hex, nonce: number | undefined, value: bigint) =>
    signTransfer(rt, from, value, nonce);

  it("two different payloads for one nonce through eth_signTransaction: the second is refused", async () => {
    const from = await custodyAddress();
    const first = await signAt(from, 7, 1n);
    expect(first.error, JSON.stringify(first.error)).toBeUndefined();
    const second = await signAt(from, 7, 2n);
    expect(second.error?.code).toBe(-32010);
    expect(second.error?.data).toMatchObject({
      code: "NONCE_ALREADY_SIGNED",
      nonce: 7,
      tx_hash: keccak256(first.result as Hex),
    });
    // The same payload again is the same bytes, not a conflict.
    const again = await signAt(from, 7, 1n);
    expect(again.error, JSON.stringify(again.error)).toBeUndefined();
    expect(again.result).toBe(first.result);
  });

  it("six different payloads for one nonce at once: exactly one is signed", async () => {
    const from = await custodyAddress();
    const answers = await Promise.all([1n, 2n, 3n, 4n, 5n, 6n].map((value) => signAt(from, 3, value)));
    const signed = answers.filter((a) => a.result !== undefined);
    const refused = answers.filter(
      (a) => (a.error?.data as { code?: string })?.code === "NONCE_ALREADY_SIGNED",
    );
    expect(signed).toHaveLength(1);
    expect(refused).toHaveLength(5);
  });

  it("at most 64 unsent payloads at or past the next nonce; the 65th is HANDED_OUT_LIMIT, and sending frees a place", async () => {
    const from = await custodyAddress();
    for (let n = 0; n < 64; n++) {
      const signed = await signAt(from, n, 1n);
      expect(signed.error, `nonce ${n}: ${JSON.stringify(signed.error)}`).toBeUndefined();
    }
    const over = await signAt(from, 64, 1n);
    expect(over.error?.code).toBe(-32005);
    expect(over.error?.data).toMatchObject({ code: "HANDED_OUT_LIMIT", limit: 64, next_nonce: 0 });
    // A send goes past nonce 0 (broadcasting its payload, then taking the next free one): a place frees.
    const sent = await rpc("eth_sendTransaction", [{ from, to: DEV_ACCOUNT_2, value: "0x1" }]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect((await signAt(from, 200, 1n)).error).toBeUndefined();
  });

  it("a caller's nonce that a sent transaction already carries is refused", async () => {
    const from = await custodyAddress();
    const sent = await rpc("eth_sendTransaction", [{ from, to: DEV_ACCOUNT_2, value: "0x1" }]);
    const mined = await receiptOf(rt, sent.result as string);
    expect(mined.status).toBe("0x1");
    const again = await signAt(from, 0, 99n);
    expect(again.error?.data).toMatchObject({ code: "NONCE_ALREADY_SIGNED", nonce: 0, tx_hash: sent.result });
  });

  it("without a nonce each payload takes the next free one, and a later send goes past them (broadcasting them)", async () => {
    const from = await custodyAddress();
    const a = await signAt(from, undefined, 1n);
    const b = await signAt(from, undefined, 2n);
    expect(parseTransaction(a.result as Hex).nonce).toBe(0);
    expect(parseTransaction(b.result as Hex).nonce).toBe(1);
    // Neither was sent by the caller: the send finds nonces 0 and 1 handed out, sends them, and takes 2.
    const sent = await rpc("eth_sendTransaction", [{ from, to: DEV_ACCOUNT_2, value: "0x3" }]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    const receipt = await receiptOf(rt, sent.result as string);
    expect(receipt.status).toBe("0x1");
    const tx = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionByHash", [sent.result])) as {
      nonce: string;
    };
    expect(tx.nonce).toBe("0x2");
    for (const handed of [a, b])
      expect((await receiptOf(rt, keccak256(handed.result as Hex))).status).toBe("0x1");
  });
});
