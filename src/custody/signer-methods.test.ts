import { randomBytes } from "node:crypto";
import { keccak256, parseTransaction, recoverMessageAddress, recoverTransactionAddress } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connect } from "../test-support/abuse-helpers.js";
import { type Envelope, receiptOf, result } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2, typedFields } from "../test-support/evm-fixtures.js";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "custody-signer-password";

async function rpc(
  rt: TestRuntime,
  method: string,
  params: unknown[],
  headers: Record<string, string> = {},
): Promise<Envelope> {
  const { status, json } = await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, headers);
  expect(status).toBe(200);
  return json as Envelope;
}

async function newWallet(
  rt: TestRuntime,
  quantity = 1,
  headers: Record<string, string> = {},
): Promise<{ id: string; addresses: `0x${string}`[] }> {
  const { status, json } = await rt.post(
    "/wallet",
    { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: quantity },
    headers,
  );
  expect(status).toBe(200);
  const records = json as { id: string; address: `0x${string}` }[];
  return { id: records[0]!.id, addresses: records.map((r) => r.address) };
}

const sendTx = (from: string, value = "0x1") => ({ from, to: DEV_ACCOUNT_2, value });

async function recorded(rt: TestRuntime, address: string): Promise<number> {
  return (
    await rt.store.db.selectFrom("transactions").select("id").where("from_address", "=", address).execute()
  ).length;
}

describeEachStore("custody signer methods", (target) => {
  let rt: TestRuntime;
  let store: TempStore;
  beforeAll(async () => {
    store = await tempStore(target);
    rt = await startTestRuntime({ store, env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });
  });
  afterAll(async () => {
    await rt?.close();
    await store?.drop();
  });

  it("eth_accounts lists the custody addresses, checksummed, wallets oldest first, never the node's", async () => {
    const first = await newWallet(rt, 2);
    const second = await newWallet(rt, 1);
    const accounts = (await rpc(rt, "eth_accounts", [])).result as string[];
    const i = accounts.indexOf(first.addresses[0]!);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(accounts.slice(i, i + 3)).toEqual([...first.addresses, ...second.addresses]);
    // anvil's dev account #0 is the node's, not ours.
    expect(accounts.map((a) => a.toLowerCase())).not.toContain("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    // The Native path answers the same.
    expect((await result<string[]>(rt, "eth_accounts", [])).slice(i, i + 3)).toEqual(
      accounts.slice(i, i + 3),
    );
  });

  it("a locked address is refused with geth's -32000 'authentication needed', an unknown one with 'unknown account'; nothing is recorded", async () => {
    const { addresses } = await newWallet(rt);
    const locked = await rpc(rt, "eth_sendTransaction", [sendTx(addresses[0]!)]);
    expect(locked.error).toMatchObject({
      code: -32000,
      message: expect.stringMatching(/^authentication needed/),
    });
    const unknown = await rpc(rt, "eth_sendTransaction", [sendTx(`0x${randomBytes(20).toString("hex")}`)]);
    expect(unknown.error).toMatchObject({ code: -32000, message: "unknown account" });
    expect((await rpc(rt, "personal_sign", ["0x1234", addresses[0]])).error?.code).toBe(-32000);
    expect(await recorded(rt, addresses[0]!)).toBe(0);
  });

  it("personal_unlockAccount: a wrong password counts in the wallet's lockout; the right one unlocks until its time, and lock ends it", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    const wrong = await rpc(rt, "personal_unlockAccount", [address, "not-the-password", 60]);
    expect(wrong.error?.message).toMatch(/password/i);
    const row = await rt.store.db
      .selectFrom("wallets")
      .innerJoin("wallet_addresses", "wallet_addresses.wallet_id", "wallets.id")
      .select("wallets.failed_attempts")
      .where("wallet_addresses.address", "=", address)
      .executeTakeFirstOrThrow();
    expect(row.failed_attempts).toBe(1);

    expect((await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 1])).result).toBe(true);
    const signature = (await rpc(rt, "eth_sign", [address, "0xdeadbeef"])).result as `0x${string}`;
    expect(await recoverMessageAddress({ message: { raw: "0xdeadbeef" }, signature })).toBe(address);
    // One second later the unlock is over.
    expect(
      await waitUntil(
        async () => (await rpc(rt, "eth_sign", [address, "0x01"])).error?.code === -32000,
        20_000,
      ),
    ).toBe(true);

    expect((await rpc(rt, "personal_unlockAccount", [address, PASSWORD, "0x3c"])).result).toBe(true);
    expect((await rpc(rt, "eth_sign", [address, "0x01"])).result).toMatch(/^0x[0-9a-f]{130}$/);
    expect((await rpc(rt, "personal_lockAccount", [address])).result).toBe(true);
    expect((await rpc(rt, "eth_sign", [address, "0x01"])).error?.code).toBe(-32000);
  });

  it("an unlock longer than the ceiling is shortened to it (--unlock-max-seconds, 3600 s by default)", async () => {
    const { id, addresses } = await newWallet(rt);
    const before = Date.now();
    const { status, json } = await rt.post(`/wallet/${id}/unlock`, {
      password: PASSWORD,
      seconds: 10_000_000,
    });
    expect(status).toBe(200);
    const until = (json as { unlocked_until: number }[])[0]!.unlocked_until;
    expect(until).toBeGreaterThan(before + 3_590_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect((await rpc(rt, "eth_sign", [addresses[0], "0x01"])).result).toBeDefined();
  });

  it("the Native paths /eth_sign and /eth_sendTransaction sign with custody addresses; the send is listed like POST /transaction", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 600]);
    const signature = await result<`0x${string}`>(rt, "eth_sign", [address, "0x68656c6c6f"]);
    expect(await recoverMessageAddress({ message: "hello", signature })).toBe(address);
    const hash = await result<string>(rt, "eth_sendTransaction", [sendTx(address, "0x2a")]);
    expect((await receiptOf(rt, hash)).status).toBe("0x1");
    const { json } = await rt.post("/list_all_transfers", { address });
    const transfers = (json as { result: { transfers: { tx_hash: string; kind: string }[] } }).result
      .transfers;
    expect(transfers.map((t) => t.tx_hash)).toContain(hash);
  });

  it("40 at once from one address, half eth_sendTransaction and half POST /transaction: consecutive nonces, all mined", async () => {
    const { id, addresses } = await newWallet(rt);
    const address = addresses[0]!;
    await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 600]);
    const hashes = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        if (i % 2 === 0) {
          const answer = await rpc(rt, "eth_sendTransaction", [sendTx(address, `0x${(i + 1).toString(16)}`)]);
          expect(answer.error).toBeUndefined();
          return answer.result as string;
        }
        const { status, json } = await rt.post("/transaction", {
          wallet_id: id,
          password: PASSWORD,
          transaction: { to: DEV_ACCOUNT_2, value: String(i + 1) },
        });
        expect(status).toBe(200);
        return (json as { tx_hash: string }).tx_hash;
      }),
    );
    const nonces: number[] = [];
    for (const hash of hashes) {
      expect((await receiptOf(rt, hash)).status).toBe("0x1");
      nonces.push(Number((await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [hash])).nonce));
    }
    expect(nonces.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it("the standard transaction object: gas, fees, type, access list, chainId and a nonce that must be the next", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 600]);
    const wrongChain = await rpc(rt, "eth_sendTransaction", [{ ...sendTx(address), chainId: "0x1" }]);
    expect(wrongChain.error).toMatchObject({ code: -32602, message: expect.stringContaining("chainId") });
    const tooHigh = await rpc(rt, "eth_sendTransaction", [{ ...sendTx(address), nonce: "0x5" }]);
    expect(tooHigh.error).toMatchObject({ data: { given: 5, next: 0 } });
    expect(tooHigh.error?.message).toMatch(/next nonce/);
    const both = await rpc(rt, "eth_sendTransaction", [
      { ...sendTx(address), gasPrice: "0x1", maxFeePerGas: "0x1" },
    ]);
    expect(both.error?.code).toBe(-32602);
    expect(await recorded(rt, address)).toBe(0);

    const legacy = await rpc(rt, "eth_sendTransaction", [
      {
        ...sendTx(address),
        nonce: "0x0",
        type: "0x1",
        gas: "0x7530",
        gasPrice: "0x77359400",
        accessList: [],
      },
    ]);
    expect(legacy.error).toBeUndefined();
    const tx = await result<{ type: string; gas: string; gasPrice: string; nonce: string }>(
      rt,
      "eth_getTransactionByHash",
      [legacy.result],
    );
    expect(tx).toMatchObject({ type: "0x1", gas: "0x7530", gasPrice: "0x77359400", nonce: "0x0" });
    const dynamic = await rpc(rt, "eth_sendTransaction", [
      { ...sendTx(address), maxFeePerGas: "0x12a05f200", maxPriorityFeePerGas: "0x3b9aca00" },
    ]);
    const second = await result<{ type: string; maxFeePerGas: string; nonce: string }>(
      rt,
      "eth_getTransactionByHash",
      [dynamic.result],
    );
    expect(second).toMatchObject({ type: "0x2", maxFeePerGas: "0x12a05f200", nonce: "0x1" });
    expect((await receiptOf(rt, dynamic.result as string)).status).toBe("0x1");
  });

  it("eth_signTransaction signs without sending, records nothing, and its nonce carries no other payload", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 600]);
    const raw = (await rpc(rt, "eth_signTransaction", [sendTx(address, "0x7")])).result as `0x${string}`;
    const parsed = parseTransaction(raw);
    expect(parsed).toMatchObject({ nonce: 0, value: 7n, chainId: 1001 });
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(address);
    expect(await recorded(rt, address)).toBe(0);
    // Nonce 0 carries those bytes and no other payload (#36's nonce guard): the next send broadcasts
    // them, since nothing else may fill nonce 0, and takes nonce 1.
    const hash = (await rpc(rt, "eth_sendTransaction", [sendTx(address)])).result as string;
    expect((await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [hash])).nonce).toBe("0x1");
    expect((await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [keccak256(raw)])).nonce).toBe(
      "0x0",
    );
  });

  it("eth_signTypedData_v4 takes the document as JSON text or an object; a malformed one is -32602 naming the problem", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 600]);
    const doc = {
      types: {
        EIP712Domain: typedFields("name string, chainId uint256"),
        Order: [{ name: "amount", type: "uint256" }],
      },
      primaryType: "Order",
      domain: { name: "shop", chainId: "0x3e9" },
      message: { amount: "1000" },
    };
    const asText = await rpc(rt, "eth_signTypedData_v4", [address, JSON.stringify(doc)]);
    const asObject = await rpc(rt, "eth_signTypedData_v4", [address, doc]);
    expect(asText.result).toMatch(/^0x[0-9a-f]{130}$/);
    expect(asObject.result).toBe(asText.result);
    const missing = await rpc(rt, "eth_signTypedData_v4", [address, { ...doc, message: {} }]);
    expect(missing.error).toMatchObject({ code: -32602, message: expect.stringContaining("message.amount") });
    const badType = await rpc(rt, "eth_signTypedData_v4", [address, { ...doc, primaryType: "Nope" }]);
    expect(badType.error).toMatchObject({ code: -32602, message: expect.stringContaining("primaryType") });
    expect((await rpc(rt, "eth_signTypedData_v4", [address, "{not json"])).error?.code).toBe(-32602);
  });

  it("an Idempotency-Key on eth_sendTransaction sends once: the retry answers the same hash", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    await rpc(rt, "personal_unlockAccount", [address, PASSWORD, 600]);
    const key = { "Idempotency-Key": `rpc-${randomBytes(4).toString("hex")}` };
    const first = await rpc(rt, "eth_sendTransaction", [sendTx(address)], key);
    const again = await rpc(rt, "eth_sendTransaction", [sendTx(address)], key);
    expect(again.result).toBe(first.result);
    expect(await recorded(rt, address)).toBe(1);
    // Locked since: the key alone does not answer what only an unlocked address could have done.
    expect((await rpc(rt, "personal_lockAccount", [address])).result).toBe(true);
    const locked = await rpc(rt, "eth_sendTransaction", [sendTx(address)], key);
    expect(locked.result).toBeUndefined();
    expect(locked.error?.message).toMatch(/locked|unlock/i);
  });

  it("in a batch and over the WebSocket the signer methods answer the same; a batch's Idempotency-Key is per call id", async () => {
    const { addresses } = await newWallet(rt);
    const address = addresses[0]!;
    const key = `batch-${randomBytes(4).toString("hex")}`;
    const batch = () =>
      rt.post(
        "/",
        [
          { jsonrpc: "2.0", id: 1, method: "personal_unlockAccount", params: [address, PASSWORD, 600] },
          { jsonrpc: "2.0", id: 2, method: "eth_accounts", params: [] },
        ],
        {},
      );
    const first = (await batch()).json as Envelope[];
    expect(first.find((a) => a.id === 1)?.result).toBe(true);
    expect(first.find((a) => a.id === 2)?.result).toContain(address);
    const sends = () =>
      rt.post(
        "/",
        [
          { jsonrpc: "2.0", id: "a", method: "eth_sendTransaction", params: [sendTx(address, "0x1")] },
          { jsonrpc: "2.0", id: "b", method: "eth_sendTransaction", params: [sendTx(address, "0x1")] },
        ],
        { "Idempotency-Key": key },
      );
    const once = (await sends()).json as Envelope[];
    const twice = (await sends()).json as Envelope[];
    // Two calls of one batch with the same body are two transactions; the retried batch sends nothing new.
    expect(new Set(once.map((a) => a.result)).size).toBe(2);
    expect(twice.map((a) => a.result).sort()).toEqual(once.map((a) => a.result).sort());
    expect(await recorded(rt, address)).toBe(2);

    const client = await connect(rt);
    try {
      const accounts = (await client.call("eth_accounts")) as Envelope;
      expect(accounts.result).toContain(address);
      const sent = (await client.call("eth_sendTransaction", [sendTx(address, "0x3")])) as Envelope;
      expect(sent.error).toBeUndefined();
      expect((await receiptOf(rt, sent.result as string)).status).toBe("0x1");
      const signature = (await client.call("personal_sign", ["0x68690a", address])) as Envelope;
      expect(
        await recoverMessageAddress({
          message: { raw: "0x68690a" },
          signature: signature.result as `0x${string}`,
        }),
      ).toBe(address);
    } finally {
      client.socket.close();
    }
  });

  it("wrong unlock passwords lock the wallet like any other unlock: the 7th guess is refused without a try", async () => {
    const { addresses } = await newWallet(rt);
    const codes: unknown[] = [];
    for (let i = 0; i < 7; i++) {
      codes.push((await rpc(rt, "personal_unlockAccount", [addresses[0], `wrong-${i}`, 60])).error?.data);
    }
    expect(codes.slice(0, 6).every((d) => (d as { code: string }).code === "WRONG_PASSWORD")).toBe(true);
    expect(codes[6]).toMatchObject({ code: "WALLET_LOCKED" });
  });

  it("after a restart unlocks are gone", async () => {
    // A second process on the same store stands for the restarted one: it has no unlocks in memory.
    const { addresses } = await newWallet(rt);
    await rpc(rt, "personal_unlockAccount", [addresses[0], PASSWORD, 600]);
    expect((await rpc(rt, "eth_sign", [addresses[0], "0x01"])).result).toBeDefined();
    const restarted = await startTestRuntime({
      store,
      // Same data directory: on SQLite that is the same database.
      dataDir: rt.dataDir,
      env: { CHAINGATE_UPSTREAMS: rt.devnet!.nodes.find((n) => n.chainId === 1001)!.url },
    });
    try {
      expect((await rpc(restarted, "eth_accounts", [])).result).toContain(addresses[0]);
      const refused = (await rpc(restarted, "eth_sign", [addresses[0], "0x01"])).error;
      // On PostgreSQL the first process is still alive beside it (no server key here): the refusal
      // names that (decision 133); on SQLite it is the same database and just locked.
      if (target === "postgres") expect(refused?.message).toMatch(/unlocked on another instance only/);
      else expect(refused?.message).toMatch(/^authentication needed/);
    } finally {
      await restarted.close();
    }
  });
});
