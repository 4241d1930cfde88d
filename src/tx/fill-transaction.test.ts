import { createWalletClient, type Hex, http, parseTransaction, toHex } from "viem";
import { prepareTransactionRequest } from "viem/actions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainAt, mine, nodeCall, nodeUrlOf } from "../test-support/chain-helpers.js";
import { fundedCustody } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { keysMade } from "../test-support/keys.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "fill-password";

describe("eth_fillTransaction knows the nonces chaingate has queued", () => {
  let rt: TestRuntime;
  let admin: string;
  const auth = () => ({ authorization: `Bearer ${admin}` });
  const rpc = async (method: string, params: unknown[]) => {
    const { json } = await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, auth());
    return json as { result?: unknown; error?: { code: number; message: string } };
  };

  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_DEVNET_NODE_ACCOUNTS: "true" } });
    // From here blocks come only when the test mines them: what chaingate sends stays queued in the node's pool.
    await nodeCall(nodeUrlOf(rt), "evm_setAutomine", [false]);
    ({ ops: admin } = await keysMade(rt, { ops: "admin" }));
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  it("with 5 transactions queued, a custody address is filled with nonce 5 (the 6th); the node counts 0", async () => {
    const { address } = await fundedCustody(rt, { password: PASSWORD, headers: auth() });
    for (let i = 0; i < 5; i++) {
      const sent = await rpc("eth_sendTransaction", [{ from: address, to: DEV_ACCOUNT_2, value: "0x1" }]);
      expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    }
    expect(await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [address, "latest"])).toBe("0x0");

    const filled = await rpc("eth_fillTransaction", [{ from: address, to: DEV_ACCOUNT_2, value: "0x2" }]);
    expect(filled.error, JSON.stringify(filled.error)).toBeUndefined();
    const { raw, tx, policy } = filled.result as {
      raw: Hex;
      tx: { nonce: string; gas: string; from: string; maxFeePerGas: string };
      policy: { allowed: boolean };
    };
    expect(tx.nonce).toBe("0x5");
    expect(tx.gas).toBe("0x5208");
    expect(BigInt(tx.maxFeePerGas)).toBeGreaterThan(0n);
    expect(tx.from).toBe(address.toLowerCase());
    expect(policy).toEqual({ allowed: true });
    // `raw` is the unsigned transaction those fields describe.
    const parsed = parseTransaction(raw);
    expect(parsed.nonce).toBe(5);
    expect(parsed.to?.toLowerCase()).toBe(DEV_ACCOUNT_2.toLowerCase());
    expect(parsed.value).toBe(2n);

    // viem's prepareTransactionRequest for a JSON-RPC account asks eth_fillTransaction and takes its nonce.
    const client = createWalletClient({
      account: address,
      chain: chainAt(rt.url),
      transport: http(rt.url, { fetchOptions: { headers: auth() } }),
    });
    const prepared = await prepareTransactionRequest(client, { to: DEV_ACCOUNT_2, value: 3n });
    expect(prepared.nonce).toBe(5);

    // Nothing was reserved by filling: the next send takes nonce 5.
    const next = await rpc("eth_sendTransaction", [{ from: address, to: DEV_ACCOUNT_2, value: "0x1" }]);
    const hash = next.result as Hex;
    await mine(rt, 1);
    const mined = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionByHash", [hash])) as { nonce: string };
    expect(mined.nonce).toBe("0x5");
  });

  it("the policy decision is a dry run: a refused value is reported, neither signed nor audited", async () => {
    const wallet = await fundedCustody(rt, { password: PASSWORD, headers: auth(), unlock: false });
    const policy = await rt.post(
      "/policies",
      { name: "small", wallet_id: wallet.id, rules: { max_value_per_tx: "100" } },
      auth(),
    );
    expect(policy.status, JSON.stringify(policy.json)).toBe(200);
    const audit = async () => {
      const res = await fetch(`${rt.url}/audit?limit=1000`, { headers: auth() });
      return ((await res.json()) as { entries: unknown[] }).entries.length;
    };
    const before = await audit();
    const filled = await rpc("eth_fillTransaction", [
      { from: wallet.address, to: DEV_ACCOUNT_2, value: toHex(1000n) },
    ]);
    expect(filled.error, JSON.stringify(filled.error)).toBeUndefined();
    expect((filled.result as { policy: unknown }).policy).toMatchObject({
      allowed: false,
      rule: "max_value_per_tx",
      policy_id: (policy.json as { id: string }).id,
    });
    expect(await audit()).toBe(before);
  });

  it("a signed authorization is filled into a type-4 transaction; one custody would have to sign is refused", async () => {
    const { address } = await fundedCustody(rt, { password: PASSWORD, headers: auth() });
    const signed = await rpc("eth_signAuthorization", [address, { address: DEV_ACCOUNT_2, nonce: "0x1" }]);
    expect(signed.error, JSON.stringify(signed.error)).toBeUndefined();

    const filled = await rpc("eth_fillTransaction", [
      { from: address, to: address, authorizationList: [signed.result] },
    ]);
    expect(filled.error, JSON.stringify(filled.error)).toBeUndefined();
    const { raw, tx } = filled.result as {
      raw: Hex;
      tx: { type: string; nonce: string; gas: string; authorizationList: unknown[] };
    };
    expect(tx.type).toBe("0x4");
    expect(tx.nonce).toBe("0x0");
    expect(tx.authorizationList).toEqual([signed.result]);
    // The estimate counts the authorization (25,000 gas for an account without code) on top of the call.
    expect(BigInt(tx.gas)).toBeGreaterThanOrEqual(21_000n + 25_000n);
    const parsed = parseTransaction(raw);
    expect(parsed.type).toBe("eip7702");
    expect(parsed.authorizationList?.[0]?.address.toLowerCase()).toBe(DEV_ACCOUNT_2.toLowerCase());
    expect(parsed.authorizationList?.[0]?.nonce).toBe(1);

    const unsigned = await rpc("eth_fillTransaction", [
      { from: address, to: address, authorizationList: [{ address: DEV_ACCOUNT_2 }] },
    ]);
    expect(unsigned.error?.code).toBe(-32602);
    expect(unsigned.error?.message).toMatch(/signs nothing/);
  });

  it("an address that is not the tenant's custody address is filled by the node", async () => {
    const filled = await rpc("eth_fillTransaction", [{ from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" }]);
    expect(filled.error, JSON.stringify(filled.error)).toBeUndefined();
    const pending = await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]);
    expect((filled.result as { tx: { nonce: string } }).tx.nonce).toBe(pending);
    expect((filled.result as { policy?: unknown }).policy).toBeUndefined();
  });
});
