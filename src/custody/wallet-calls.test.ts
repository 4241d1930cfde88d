import { createWalletClient, type Hex, http } from "viem";
import { getCallsStatus, getCapabilities, sendCalls, waitForCallsStatus } from "viem/actions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chainAt,
  devSend,
  type Envelope,
  nodeCall,
  nodeUrlOf,
  receiptOf,
} from "../test-support/chain-helpers.js";
import { fundedCustody } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2, REVERTER_INIT_CODE } from "../test-support/evm-fixtures.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "calls-password";

describe("EIP-5792 for custody addresses, through viem", () => {
  let rt: TestRuntime;
  let reverter: Hex;
  const rpc = async (method: string, params: unknown[]) =>
    (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params })).json as Envelope;

  const custody = async (): Promise<Hex> => (await fundedCustody(rt, { password: PASSWORD })).address;
  const client = (account: Hex) =>
    createWalletClient({
      account,
      chain: chainAt(rt.url),
      transport: http(rt.url),
    });

  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });
    reverter = (await receiptOf(rt, await devSend(rt, { data: REVERTER_INIT_CODE }))).contractAddress as Hex;
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  it("sendCalls sends the calls in order under consecutive nonces; waitForCallsStatus answers success with receipts", async () => {
    const address = await custody();
    const wallet = client(address);
    const capabilities = await getCapabilities(wallet, { account: address });
    expect(capabilities[1001]).toMatchObject({ atomic: { status: "unsupported" } });
    const { id } = await sendCalls(wallet, {
      calls: [
        { to: DEV_ACCOUNT_2, value: 1n },
        { to: DEV_ACCOUNT_2, value: 2n },
        { to: DEV_ACCOUNT_2, value: 3n },
      ],
    });
    const status = await waitForCallsStatus(wallet, { id, timeout: 60_000, pollingInterval: 100 });
    expect(status.status).toBe("success");
    expect(status.atomic).toBe(false);
    expect(status.receipts).toHaveLength(3);
    const nonces = await Promise.all(
      status.receipts!.map(async (r) => {
        const tx = (await nodeCall(nodeUrlOf(rt), "eth_getTransactionByHash", [r.transactionHash])) as {
          nonce: string;
          value: string;
        };
        return [Number(tx.nonce), BigInt(tx.value)] as const;
      }),
    );
    expect(nonces).toEqual([
      [0, 1n],
      [1, 2n],
      [2, 3n],
    ]);
    // The bundle keeps its calls' nonces (decision 204); one recorded before it had none, and is read by sender.
    const kept = await rt.store.db
      .selectFrom("call_bundles")
      .select("tx_nonces")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(kept.tx_nonces).toBe("[0,1,2]");
    await rt.store.db.updateTable("call_bundles").set({ tx_nonces: null }).where("id", "=", id).execute();
    const before = await getCallsStatus(wallet, { id });
    expect(before.status).toBe("success");
    expect(before.receipts?.map((r) => r.transactionHash)).toEqual(
      status.receipts!.map((r) => r.transactionHash),
    );
  });

  it("atomicRequired is refused (5760), an unknown id is 5730, and a reused id is 5720", async () => {
    const address = await custody();
    const wallet = client(address);
    await expect(
      sendCalls(wallet, { calls: [{ to: DEV_ACCOUNT_2, value: 1n }], forceAtomic: true }),
    ).rejects.toMatchObject({ cause: { name: "AtomicityNotSupportedError", code: 5760 } });
    await expect(getCallsStatus(wallet, { id: "0x1234" })).rejects.toMatchObject({ code: 5730 });
    await sendCalls(wallet, { id: "bundle-1", calls: [{ to: DEV_ACCOUNT_2, value: 1n }] });
    const again = await rpc("wallet_sendCalls", [
      {
        version: "2.0.0",
        id: "bundle-1",
        from: address,
        chainId: "0x3e9",
        atomicRequired: false,
        calls: [{ to: DEV_ACCOUNT_2, value: "0x1" }],
      },
    ]);
    expect(again.error?.code).toBe(5720);
    // 16 calls at most: each is a signature and a transaction of its own.
    const tooMany = await rpc("wallet_sendCalls", [
      {
        version: "2.0.0",
        from: address,
        chainId: "0x3e9",
        atomicRequired: false,
        calls: Array.from({ length: 17 }, () => ({ to: DEV_ACCOUNT_2, value: "0x1" })),
      },
    ]);
    expect(tooMany.error?.code).toBe(5740);
  });

  it("a call the node's estimate refuses stops the bundle: the calls before it are sent and the status is partial", async () => {
    const address = await custody();
    const wallet = client(address);
    const { id } = await sendCalls(wallet, {
      calls: [{ to: DEV_ACCOUNT_2, value: 1n }, { to: reverter }],
    });
    const status = await waitForCallsStatus(wallet, {
      id,
      timeout: 60_000,
      pollingInterval: 100,
      throwOnFailure: false,
    });
    expect(status.statusCode).toBe(600);
    expect(status.receipts).toHaveLength(1);
  });
});
