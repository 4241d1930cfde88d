import { createPublicClient, type Hex, http, keccak256, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { sendRawTransactionSync } from "viem/actions";
import { describe, expect, it } from "vitest";
import { cast } from "../test-support/cast.js";
import { chainAt, native, nodeCall, nodeUrlOf, receiptOf } from "../test-support/chain-helpers.js";
import { fundedCustody } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "sync-send-password";

/** A fresh key funded from the dev account, so each test owns its nonces. */
async function fundedKey(rt: TestRuntime) {
  const key = privateKeyToAccount(keccak256(`0x${Math.random().toString(16).slice(2).padEnd(8, "0")}`));
  const funded = await native(rt, "eth_sendTransaction", [
    { from: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", to: key.address, value: "0x8ac7230489e80000" },
  ]);
  await receiptOf(rt, funded.result as string);
  return key;
}

/** A new custody wallet's address, funded from the dev account and unlocked. */
const unlockedCustody = (rt: TestRuntime) => fundedCustody(rt, { password: PASSWORD });

async function signed(key: ReturnType<typeof privateKeyToAccount>, nonce: number): Promise<Hex> {
  return key.signTransaction({
    chainId: 1001,
    type: "eip1559",
    nonce,
    to: DEV_ACCOUNT_2,
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: 50_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
}

describe("synchronous sends (EIP-7966) on a chain that mines a block a second", () => {
  const rt = suiteRuntime({
    env: { CHAINGATE_DEVNET_BLOCK_TIME: "1", CHAINGATE_DEVNET_NODE_ACCOUNTS: "true" },
  });
  /** `cast send --sync` of 1 wei to DEV_ACCOUNT_2 through chaingate, signed as `signer` says. */
  const castSendSync = (...signer: string[]) =>
    cast(["send", "--sync", ...signer, "--rpc-url", rt.url, "--json", DEV_ACCOUNT_2, "--value", "1"]);

  it("viem's sendRawTransactionSync answers the mined receipt, waited for on the chain's heads", async () => {
    const key = await fundedKey(rt);
    const client = createPublicClient({
      chain: chainAt(rt.url),
      transport: http(rt.url),
    });
    const raw = await signed(key, 0);
    const receipt = await sendRawTransactionSync(client, { serializedTransaction: raw, timeout: 20_000 });
    expect(receipt.status).toBe("success");
    expect(receipt.transactionHash).toBe(keccak256(raw));
    expect(receipt.from.toLowerCase()).toBe(key.address.toLowerCase());
    // The node's own record agrees: the receipt answered is the mined one.
    const mined = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionReceipt", [keccak256(raw)])) as {
      blockHash: string;
    };
    expect(mined.blockHash).toBe(receipt.blockHash);
  });

  it("past its timeout the answer is code 4 with the hash, and the transaction is still mined", async () => {
    const key = await fundedKey(rt);
    const raw = await signed(key, 0);
    const answer = await native(rt, "eth_sendRawTransactionSync", [raw, "0x1"]);
    expect(answer.error?.code).toBe(4);
    expect(answer.error?.data).toMatchObject({ code: "RECEIPT_TIMEOUT", tx_hash: keccak256(raw) });
    expect((await receiptOf(rt, keccak256(raw))).status).toBe("0x1");
  });

  it("a nonce past the sender's next is answered at once with code 5 and the nonce expected", async () => {
    const key = await fundedKey(rt);
    const raw = await signed(key, 3);
    const started = Date.now();
    const answer = await native(rt, "eth_sendRawTransactionSync", [raw, 30_000]);
    expect(answer.error?.code).toBe(5);
    expect(answer.error?.data).toMatchObject({
      code: "TRANSACTION_NOT_READY",
      tx_hash: keccak256(raw),
      expected_nonce: "0x0",
    });
    // Told before the 30 s the caller allowed ran out.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("a bad timeout is INVALID_PARAMS naming it", async () => {
    const key = await fundedKey(rt);
    const answer = await native(rt, "eth_sendRawTransactionSync", [await signed(key, 0), "soon"]);
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toMatch(/timeout/);
  });

  it("custody: eth_sendTransactionSync and POST /transaction with wait_ms answer the receipt", async () => {
    const wallet = await unlockedCustody(rt);

    const viaRpc = await native(rt, "eth_sendTransactionSync", [
      { from: wallet.address, to: DEV_ACCOUNT_2, value: "0x1" },
      20_000,
    ]);
    expect(viaRpc.error).toBeUndefined();
    const receipt = viaRpc.result as { status: string; from: string; transactionHash: string };
    expect(receipt.status).toBe("0x1");
    expect(receipt.from.toLowerCase()).toBe(wallet.address.toLowerCase());

    const body = {
      wallet_id: wallet.id,
      password: PASSWORD,
      transaction: { to: DEV_ACCOUNT_2, value: parseEther("0.001").toString() },
      wait_ms: 20_000,
    };
    const viaRest = await rt.post("/transaction", body, { "idempotency-key": "sync-rest-1" });
    expect(viaRest.status, JSON.stringify(viaRest.json)).toBe(200);
    const answered = viaRest.json as {
      tx_hash: string;
      receipt: { status: string; transactionHash: string };
    };
    expect(answered.receipt.status).toBe("0x1");
    expect(answered.receipt.transactionHash).toBe(answered.tx_hash);
    // A retry with another wait replays the one transaction (the wait is not part of what was asked to send).
    const replay = await rt.post(
      "/transaction",
      { ...body, wait_ms: 5_000 },
      { "idempotency-key": "sync-rest-1" },
    );
    expect(replay.status, JSON.stringify(replay.json)).toBe(200);
    expect((replay.json as { tx_hash: string }).tx_hash).toBe(answered.tx_hash);

    // Too short a wait: 504 with the hash; the transaction is tracked and mined all the same.
    const short = await rt.post("/transaction", { ...body, wait_ms: 1 });
    expect(short.status, JSON.stringify(short.json)).toBe(504);
    expect(short.json).toMatchObject({ code: "RECEIPT_TIMEOUT" });
    const hash = (short.json as { errors?: { tx_hash: string } }).errors?.tx_hash;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await receiptOf(rt, hash!)).status).toBe("0x1");
  });

  it("cast send --sync: with its own key (eth_sendRawTransactionSync) and from a custody address (eth_sendTransactionSync)", async () => {
    const ownKey = keccak256(`0x${Math.random().toString(16).slice(2).padEnd(8, "0")}`);
    const withKey = privateKeyToAccount(ownKey);
    const funded = await native(rt, "eth_sendTransaction", [
      {
        from: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        to: withKey.address,
        value: "0x8ac7230489e80000",
      },
    ]);
    await receiptOf(rt, funded.result as string);
    const raw = JSON.parse(await castSendSync("--private-key", ownKey)) as { status: string; from: string };
    expect(raw.status).toBe("0x1");
    expect(raw.from.toLowerCase()).toBe(withKey.address.toLowerCase());

    const wallet = await unlockedCustody(rt);
    const custody = JSON.parse(await castSendSync("--unlocked", "--from", wallet.address)) as {
      status: string;
      from: string;
      transactionHash: string;
    };
    expect(custody.status).toBe("0x1");
    expect(custody.from.toLowerCase()).toBe(wallet.address.toLowerCase());
    const row = await rt.store.db
      .selectFrom("transactions")
      .select("from_address")
      .where("tx_hash", "=", custody.transactionHash)
      .executeTakeFirst();
    expect(row?.from_address).toBe(wallet.address);
    // cast asked the synchronous methods themselves (it does not fall back to polling).
    const metrics = await (await fetch(`${rt.url}/metrics`)).text();
    for (const method of ["eth_sendRawTransactionSync", "eth_sendTransactionSync"])
      expect(metrics, method).toMatch(new RegExp(`method="${method}"[^}]*} [1-9]`));
  });
});
