import { type Abi, encodeEventTopics, type Hex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BridgeERC20, MessageEndpoint } from "../contracts/artifacts.generated.js";
import { nodeCall, receiptOf, result } from "../test-support/chain-helpers.js";
import { REVERTER_INIT_CODE } from "../test-support/evm-fixtures.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import {
  newWallet,
  ok,
  PASSWORD,
  peerAndCoin,
  read,
  sendTransport,
  transport,
} from "../test-support/token-helpers.js";
import { LaneLimits } from "./lane-limits.js";
import { Relayer } from "./relayer.js";

const RECIPIENT = "0x00000000000000000000000000000000000000AA";

const anvil = (rt: TestRuntime, chainIndex: number, method: string, params: unknown[]) =>
  nodeCall(rt.devnet!.nodes[chainIndex]!.url, method, params);

describeEachStore("the relayer delivers at most once", (target) => {
  let rt: TestRuntime;
  let wallet: { id: string; address: Hex };
  let token: string;
  let refuser: string;

  const relayer = () =>
    new Relayer({
      store: rt.store,
      chains: rt.chains,
      pipeline: rt.pipeline,
      system: rt.system!,
      logger: rt.app.log as never,
      intervalMs: 100,
      trust: () => ({ finality: 1, quorum: undefined, source: "embedded" }),
      lanes: new LaneLimits(rt.store),
    });

  const send = (amount: string) => sendTransport(rt, { walletId: wallet.id, token, to: RECIPIENT, amount });

  async function deliveryCount(id: string): Promise<{ events: number; transactions: number }> {
    const logs = await result<unknown[]>(
      rt,
      "eth_getLogs",
      [
        {
          address: rt.system!.endpoint,
          topics: encodeEventTopics({
            abi: MessageEndpoint.abi,
            eventName: "MessageDelivered",
            args: { id: id as Hex },
          }),
          fromBlock: "0x0",
          toBlock: "latest",
        },
      ],
      "?chain_id=1002",
    );
    const rows = await rt.store.db
      .selectFrom("transactions")
      .select("id")
      .where("kind", "=", "transport_delivery")
      .where("metadata", "like", `%${id}%`)
      .execute();
    return { events: logs.length, transactions: rows.length };
  }

  beforeAll(async () => {
    rt = await startTestRuntime({ store: target, relay: false });
    wallet = await newWallet(rt);
    token = await peerAndCoin(rt, wallet.id, { role: "AUDITOR", name: "Relay Coin", symbol: "RLY" });
    // A receiver on 1002 that refuses every call (a receiver without code is refused before signing).
    const deployed = await ok(rt, "deploy_new_contract", {
      wallet_id: wallet.id,
      password: PASSWORD,
      chain_id: 1002,
      bytecode: REVERTER_INIT_CODE,
    });
    await receiptOf(rt, deployed.tx_hash as string, "?chain_id=1002");
    refuser = deployed.address as string;
  }, 60_000);
  afterAll(async () => rt?.close());

  it("two relayers working at once send one delivery", async () => {
    const id = await send("10");
    const [a, b] = [relayer(), relayer()];
    for (let i = 0; i < 20 && (await transport(rt, id))?.state !== "delivered"; i++) {
      await Promise.all([a.tick(), b.tick()]);
    }
    expect((await transport(rt, id))?.state).toBe("delivered");
    expect(await deliveryCount(id)).toEqual({ events: 1, transactions: 1 });
    expect(await read(rt, 1002, token, BridgeERC20.abi as Abi, "balanceOf", [RECIPIENT])).toBe(10n);
  });

  it("a crash between sending the delivery and noting it: the next relayer waits for it instead of sending again", async () => {
    const id = await send("20");
    await anvil(rt, 1, "evm_setAutomine", [false]);
    try {
      await relayer().tick();
      const out = await transport(rt, id);
      expect(out?.state).toBe("delivering");
      // The crash: the transport row forgets the delivery; the pipeline's own record of it remains.
      await rt.store.db
        .updateTable("transports")
        .set({ state: "sent", destination_tx_hash: null, lease_owner: null, lease_until: null })
        .where("id", "=", id)
        .execute();
      const next = relayer();
      await next.tick();
      expect((await transport(rt, id))?.destination_tx_hash).toBe(out?.destination_tx_hash);
      await anvil(rt, 1, "evm_setAutomine", [true]);
      await anvil(rt, 1, "evm_mine", []);
      for (let i = 0; i < 20 && (await transport(rt, id))?.state !== "delivered"; i++) await next.tick();
      expect(await transport(rt, id)).toMatchObject({
        state: "delivered",
        destination_tx_hash: out?.destination_tx_hash,
      });
    } finally {
      await anvil(rt, 1, "evm_setAutomine", [true]);
    }
    expect(await deliveryCount(id)).toEqual({ events: 1, transactions: 1 });
    expect(await read(rt, 1002, token, BridgeERC20.abi as Abi, "balanceOf", [RECIPIENT])).toBe(30n);
  });

  it("a delivery the destination refuses fails with the reason and is not retried", async () => {
    // A message to a contract that reverts every call: the delivery reverts.
    const sent = await ok(rt, "transport_arbitrary_message", {
      wallet_id: wallet.id,
      password: PASSWORD,
      destination_chain_id: 1002,
      destination: refuser,
      payload: "0x01",
    });
    await receiptOf(rt, sent.tx_hash as string);
    const r = relayer();
    for (let i = 0; i < 10 && (await transport(rt, sent.transport_id as string))?.state === "sent"; i++)
      await r.tick();
    const row = await transport(rt, sent.transport_id as string);
    expect(row?.state).toBe("failed");
    expect(row?.error).toMatch(/delivery refused/);
    expect(await deliveryCount(sent.transport_id as string)).toEqual({ events: 0, transactions: 0 });
  });

  it("a token transport the destination refuses is cancelled there and its tokens go back to the sender", async () => {
    const abi = BridgeERC20.abi as Abi;
    const before = (await read(rt, 1001, token, abi, "balanceOf", [wallet.address])) as bigint;
    // Data for a recipient whose callback reverts: the destination refuses it.
    const sent = await ok(rt, "transport_token_with_data", {
      wallet_id: wallet.id,
      password: PASSWORD,
      token,
      to: refuser,
      amount: "7",
      destination_chain_id: 1002,
      data: "0x01",
    });
    await receiptOf(rt, sent.tx_hash as string);
    expect(await read(rt, 1001, token, abi, "balanceOf", [wallet.address])).toBe(before - 7n);
    const r = relayer();
    const id = sent.transport_id as string;
    for (let i = 0; i < 10 && (await transport(rt, id))?.refund_state !== "done"; i++) await r.tick();
    const row = await transport(rt, id);
    expect(row).toMatchObject({ state: "failed", refund_state: "done" });
    expect(row?.error).toMatch(/delivery refused/);
    expect((await receiptOf(rt, row!.refund_tx_hash!)).status).toBe("0x1");
    // Back with the sender, nothing on the destination, and the id closed there for good.
    expect(await read(rt, 1001, token, abi, "balanceOf", [wallet.address])).toBe(before);
    expect(await read(rt, 1002, token, abi, "balanceOf", [refuser])).toBe(0n);
    expect(
      await read(rt, 1002, rt.system!.endpoint, MessageEndpoint.abi as Abi, "executed", [1001n, id]),
    ).toBe(true);
    expect(await deliveryCount(id)).toEqual({ events: 0, transactions: 0 });
    // More passes refund nothing twice.
    await r.tick();
    expect(await read(rt, 1001, token, abi, "balanceOf", [wallet.address])).toBe(before);
  });
});
