import type { Abi, Hex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BridgeERC20 } from "../contracts/artifacts.generated.js";
import { nodeCall, receiptOf } from "../test-support/chain-helpers.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import {
  deliveries,
  newWallet,
  ok,
  PASSWORD,
  peerAndCoin,
  read,
  sendTransport,
  transport,
  waitFor,
} from "../test-support/token-helpers.js";

const RECIPIENT = "0x00000000000000000000000000000000000000ab";
const HOUR = 3_600_000;

describeEachStore("what the relayer checks before value moves: finality, reorgs, lane limits", (target) => {
  let rt: TestRuntime;
  let token: string;
  const anvil = (chainIndex: number, method: string, params: unknown[] = []) =>
    nodeCall(rt.devnet!.nodes[chainIndex]!.url, method, params);

  const send = (wallet: { id: string }, amount: string) =>
    sendTransport(rt, { walletId: wallet.id, token, to: RECIPIENT, amount });

  const balance = (chainId: number, holder: string) =>
    read(rt, chainId, token, BridgeERC20.abi as Abi, "balanceOf", [holder]) as Promise<bigint>;

  let alice: { id: string; address: Hex };
  beforeAll(async () => {
    // The relayer is driven by hand: each pass is one call, so nothing here waits on a timer.
    rt = await startTestRuntime({ store: target, relay: false });
    alice = await newWallet(rt);
    token = await peerAndCoin(rt, alice.id, { role: "PARTICIPANT", name: "Lane Coin", symbol: "LANE" });
  }, 60_000);
  afterAll(async () => rt?.close());

  it("lane limits: admins set them; a transport over the limit is queued with its release time, not delivered", async () => {
    const sameChain = await putLane({ source_chain_id: 1001, destination_chain_id: 1001 });
    expect(sameChain.status).toBe(400);
    expect((sameChain.json as { code: string }).code).toBe("INVALID_LANE_LIMIT");
    const unknown = await putLane({ destination_chain_id: 4242 });
    expect((unknown.json as { detail: string }).detail).toContain("4242 is not a configured chain");
    const missing = await putLane({ capacity: undefined });
    expect(missing.status).toBe(400);
    expect((missing.json as { detail: string }).detail).toContain("capacity");

    const set = await putLane({});
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    expect(set.json).toMatchObject({
      capacity: "100",
      period_seconds: 3600,
      available: "100",
      refund_after_seconds: null,
    });

    const before = Date.now();
    const id = await send(alice, "150");
    await rt.relayer!.tick();
    const queued = await transport(rt, id);
    expect(queued).toMatchObject({ state: "queued", refund_at: null, source_confirmations: 1 });
    // 50 over a 100-per-hour lane: released in half an hour.
    const releaseAt = Date.parse(queued!.release_at!);
    expect(releaseAt).toBeGreaterThanOrEqual(before + HOUR / 2 - 1_000);
    expect(releaseAt).toBeLessThanOrEqual(Date.now() + HOUR / 2 + 1_000);
    await rt.relayer!.tick();
    expect((await transport(rt, id))?.state).toBe("queued");
    expect(await deliveries(rt, id)).toBe(0);
    const lanes = (await fetch(`${rt.url}/lanes`).then((r) => r.json())) as { available: string }[];
    expect(BigInt(lanes[0]!.available)).toBeLessThan(-49n);

    // Its release time comes (brought forward here, as time would): delivered, and only then.
    await rt.store.db
      .updateTable("transports")
      .set({ release_at: Date.now() - 1, next_check_at: null })
      .where("id", "=", id)
      .execute();
    await rt.relayer!.tick();
    await waitFor("the queued transport delivered", async () => {
      await rt.relayer!.tick();
      return (await transport(rt, id))?.state === "delivered" ? true : undefined;
    });
    expect(await deliveries(rt, id)).toBe(1);
    expect(await balance(1002, RECIPIENT)).toBe(150n);
  });

  it("a lane with a refund deadline gives a transport that would wait past it back to its sender", async () => {
    expect((await putLane({ refund_after_seconds: 1 })).status).toBe(200);
    const held = await balance(1001, alice.address);
    const id = await send(alice, "60");
    await rt.relayer!.tick();
    const queued = await transport(rt, id);
    expect(queued?.state).toBe("queued");
    expect(Date.parse(queued!.refund_at!)).toBeLessThan(Date.parse(queued!.release_at!));
    expect(await balance(1001, alice.address)).toBe(held - 60n);
    const refunded = await waitFor("the refund", async () => {
      await rt.relayer!.tick();
      const row = await transport(rt, id);
      return row?.refund_state === "done" ? row : undefined;
    });
    expect(refunded).toMatchObject({ state: "failed" });
    expect(refunded.error).toContain("refund deadline");
    expect(await balance(1001, alice.address)).toBe(held);
    expect(await deliveries(rt, id)).toBe(0);

    expect((await fetch(`${rt.url}/lanes/1001/1002/${token}`, { method: "DELETE" })).status).toBe(204);
    const again = await fetch(`${rt.url}/lanes/1001/1002/${token}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe("LANE_LIMIT_NOT_FOUND");
  });

  it("a source block reorged away after the scan: the transport is held as reorged and not delivered", async () => {
    const bob = await newWallet(rt);
    const given = await ok(rt, "transfer_tokens", {
      wallet_id: alice.id,
      password: PASSWORD,
      token,
      to: bob.address,
      amount: "10",
    });
    await receiptOf(rt, given.tx_hash as string);
    const snapshot = await anvil(0, "evm_snapshot");
    const id = await send(bob, "7");
    await rt.relayer!.scan();
    expect(
      (
        await rt.store.db
          .selectFrom("transports")
          .select("source_block")
          .where("id", "=", id)
          .executeTakeFirst()
      )?.source_block,
    ).not.toBeNull();
    // The chain goes another way: the block with the burn is gone, and the chain is longer than before.
    expect(await anvil(0, "evm_revert", [snapshot])).toBe(true);
    for (let i = 0; i < 3; i++) await anvil(0, "evm_mine");
    await rt.relayer!.work();
    const row = await transport(rt, id);
    expect(row?.state).toBe("reorged");
    expect(row?.error).toContain("not on the canonical chain");
    expect(await deliveries(rt, id)).toBe(0);
  });

  function putLane(overrides: Record<string, unknown>) {
    const body: Record<string, unknown> = {
      source_chain_id: 1001,
      destination_chain_id: 1002,
      token,
      capacity: "100",
      period_seconds: 3600,
      ...overrides,
    };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    return fetch(`${rt.url}/lanes`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as unknown }));
  }
});
