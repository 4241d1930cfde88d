import { createWalletClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { recoverAuthorizationAddress } from "viem/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chainAt,
  devSend,
  type Envelope,
  nodeCall,
  nodeReceipt,
  nodeUrlOf,
  receiptOf,
} from "../test-support/chain-helpers.js";
import { fundedCustody } from "../test-support/custody-helpers.js";
import {
  DEV_ACCOUNT_2,
  DEV_PRIVATE_KEY,
  EMITTER_INIT_CODE,
  REVERTER_INIT_CODE,
} from "../test-support/evm-fixtures.js";
import { keysMade } from "../test-support/keys.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { fromRpcAuthorization, type RpcAuthorization } from "../tx/authorizations.js";

const PASSWORD = "delegation-password";
const designator = (delegate: string) => `0xef0100${delegate.slice(2).toLowerCase()}`;

describe("EIP-7702 from custody", () => {
  let rt: TestRuntime;
  let admin: string;
  let delegate: Hex;
  let otherDelegate: Hex;
  const auth = () => ({ authorization: `Bearer ${admin}` });
  const rpc = async (method: string, params: unknown[]) =>
    (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, auth())).json as Envelope;
  const code = (address: string) => nodeCall(nodeUrlOf(rt), "eth_getCode", [address, "latest"]);
  /** The receipt, read from the node itself (chaingate's own reads need the key). */
  const mined = (hash: unknown) => nodeReceipt(nodeUrlOf(rt), hash);
  const same = (a: string | null, b: string) => a?.toLowerCase() === b.toLowerCase();

  /** A wallet with `n` funded, unlocked addresses. */
  const custody = (n: number) => fundedCustody(rt, { password: PASSWORD, addresses: n, headers: auth() });

  async function audit(): Promise<
    { operation: string; decision: string; rule: string | null; address: string }[]
  > {
    const res = await fetch(`${rt.url}/audit?limit=1000`, { headers: auth() });
    return ((await res.json()) as { entries: never[] }).entries;
  }

  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });
    const deploy = async (initCode: Hex) =>
      (await receiptOf(rt, await devSend(rt, { data: initCode }))).contractAddress as Hex;
    delegate = await deploy(EMITTER_INIT_CODE);
    otherDelegate = await deploy(REVERTER_INIT_CODE);
    // From here on every request needs the key (the policies are an admin's).
    ({ ops: admin } = await keysMade(rt, { ops: "admin" }));
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  it("a type-4 eth_sendTransaction with the sender's own authorization is mined; its code is the delegation designator", async () => {
    const { addresses } = await custody(1);
    const [a] = addresses as [Hex];
    const sent = await rpc("eth_sendTransaction", [
      { from: a, to: a, type: "0x4", authorizationList: [{ address: delegate }] },
    ]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    const receipt = await mined(sent.result as string);
    expect(receipt.status).toBe("0x1");
    const tx = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionByHash", [sent.result])) as {
      type: string;
      nonce: string;
      authorizationList: { nonce: string }[];
    };
    expect(tx.type).toBe("0x4");
    // The sender's own authorization is signed at the transaction's nonce + 1.
    expect(BigInt(tx.authorizationList[0]!.nonce)).toBe(BigInt(tx.nonce) + 1n);
    expect(await code(a)).toBe(designator(delegate));
    // The ledger moved past both nonces: the next send goes through.
    const next = await rpc("eth_sendTransaction", [{ from: a, to: DEV_ACCOUNT_2, value: "0x1" }]);
    expect((await mined(next.result as string)).status).toBe("0x1");
    const entries = await audit();
    expect(
      entries.some(
        (e) => same(e.address, a) && e.operation === "eth_sendTransaction" && e.decision === "allowed",
      ),
    ).toBe(true);
  });

  it("another custody address of the tenant authorizes; its nonce is followed and its own sends go on", async () => {
    const { addresses } = await custody(2);
    const [sponsor, authority] = addresses as [Hex, Hex];
    const sent = await rpc("eth_sendTransaction", [
      { from: sponsor, to: authority, authorizationList: [{ address: delegate, authority }] },
    ]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect((await mined(sent.result as string)).status).toBe("0x1");
    expect(await code(authority)).toBe(designator(delegate));
    const own = await rpc("eth_sendTransaction", [{ from: authority, to: DEV_ACCOUNT_2, value: "0x1" }]);
    expect(own.error, JSON.stringify(own.error)).toBeUndefined();
    expect((await mined(own.result as string)).status).toBe("0x1");
  });

  it("an authorization to a delegate not on the policy's list is refused, audited, and nothing is sent", async () => {
    const wallet = await custody(1);
    const [a] = wallet.addresses as [Hex];
    const policy = await rt.post(
      "/policies",
      { name: "delegates", wallet_id: wallet.id, rules: { delegates: [{ address: delegate }] } },
      auth(),
    );
    expect(policy.status, JSON.stringify(policy.json)).toBe(200);
    const refused = await rpc("eth_sendTransaction", [
      { from: a, to: a, authorizationList: [{ address: otherDelegate }] },
    ]);
    expect(refused.error?.data).toMatchObject({ code: "POLICY_DENIED", rule: "delegates" });
    expect(await code(a)).toBe("0x");
    expect(await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [a, "pending"])).toBe("0x0");
    const denied = (await audit()).filter((e) => same(e.address, a) && e.decision === "denied");
    expect(denied).toHaveLength(1);
    expect(denied[0]!.rule).toBe("delegates");
    // Every chain (chain id 0) is refused unless the entry lists it; the listed delegate is allowed.
    const everywhere = await rpc("eth_signAuthorization", [a, { address: delegate, chainId: "0x0" }]);
    expect(everywhere.error?.data).toMatchObject({ code: "POLICY_DENIED", rule: "delegates" });
    const allowed = await rpc("eth_sendTransaction", [
      { from: a, to: a, authorizationList: [{ address: delegate }] },
    ]);
    expect((await mined(allowed.result as string)).status).toBe("0x1");
    expect(await code(a)).toBe(designator(delegate));
  });

  it("eth_signAuthorization answers an authorization a viem client sends in its own type-4 transaction", async () => {
    const { addresses } = await custody(1);
    const [authority] = addresses as [Hex];
    const answer = await rpc("eth_signAuthorization", [authority, { address: delegate }]);
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    const signed = fromRpcAuthorization(answer.result as RpcAuthorization);
    expect(signed).toMatchObject({ chainId: 1001, nonce: 0 });
    expect(same(signed.address, delegate)).toBe(true);
    expect(await recoverAuthorizationAddress({ authorization: signed })).toBe(authority);
    // A relayer with its own key (the dev account) sends it through chaingate.
    const relayer = createWalletClient({
      account: privateKeyToAccount(DEV_PRIVATE_KEY),
      chain: chainAt(rt.url),
      transport: http(rt.url, { fetchOptions: { headers: auth() } }),
    });
    const hash = await relayer.sendTransaction({ to: authority, authorizationList: [signed] });
    expect((await mined(hash)).status).toBe("0x1");
    expect(await code(authority)).toBe(designator(delegate));
    // A signed entry can also be handed to eth_sendTransaction as it is.
    expect(
      (await audit()).some((e) => same(e.address, authority) && e.operation === "eth_signAuthorization"),
    ).toBe(true);
  });

  it("POST /transaction: the sender and another address of the wallet authorize in one type-4 transaction", async () => {
    const wallet = await custody(2);
    const [sender, second] = wallet.addresses as [Hex, Hex];
    const sent = await rt.post(
      "/transaction",
      {
        wallet_id: wallet.id,
        password: PASSWORD,
        transaction: {
          to: sender,
          authorizations: [{ delegate }, { delegate: otherDelegate, index: 1 }],
        },
        wait_ms: 20_000,
      },
      auth(),
    );
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    expect((sent.json as { receipt: { status: string } }).receipt.status).toBe("0x1");
    expect(await code(sender)).toBe(designator(delegate));
    expect(await code(second)).toBe(designator(otherDelegate));
    const bad = await rt.post(
      "/transaction",
      {
        wallet_id: wallet.id,
        password: PASSWORD,
        transaction: { to: sender, authorizations: [{ delegate: "0x12" }] },
      },
      auth(),
    );
    expect(bad.status).toBe(400);
  });

  it("bad authorization entries are INVALID_PARAMS naming the field", async () => {
    const { addresses } = await custody(1);
    const [a] = addresses as [Hex];
    const missing = await rpc("eth_sendTransaction", [
      { from: a, to: a, authorizationList: [{ nonce: "0x1" }] },
    ]);
    expect(missing.error?.code).toBe(-32602);
    expect(missing.error?.message).toMatch(/authorizationList\[0\]\.address/);
    const legacy = await rpc("eth_sendTransaction", [
      { from: a, to: a, gasPrice: "0x3b9aca00", authorizationList: [{ address: delegate }] },
    ]);
    expect(legacy.error?.message).toMatch(/maxFeePerGas/);
    const twice = await rpc("eth_sendTransaction", [
      { from: a, to: a, authorizationList: [{ address: delegate }, { address: otherDelegate }] },
    ]);
    expect(twice.error?.message).toMatch(/authorizes twice/);
    const tooMany = await rpc("eth_sendTransaction", [
      { from: a, to: a, authorizationList: Array.from({ length: 17 }, () => ({ address: delegate })) },
    ]);
    expect(tooMany.error?.message).toMatch(/at most 16 entries/);
  });
});
