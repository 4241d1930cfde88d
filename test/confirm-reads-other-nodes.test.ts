/** Decision 203 in front of Hardhat and Ganache: a mined record's block is read again only at a new head, and the record is confirmed once final by --confirmations. */
import { toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BehindOtherNodes,
  GANACHE,
  HARDHAT,
  startBehindHardhatAndGanache,
} from "../src/test-support/behind-other-nodes.js";
import { nodeCall } from "../src/test-support/chain-helpers.js";
import { waitUntil } from "../src/test-support/cli.js";
import { recordOf, walletFundedOn } from "../src/test-support/custody-helpers.js";
import { DEV_ACCOUNT_2 } from "../src/test-support/evm-fixtures.js";
import { startRpcProxy } from "../src/test-support/rpc-proxy.js";
import type { TestRuntime } from "../src/test-support/test-runtime.js";

const PASSWORD = "confirm-reads-other-nodes";
/** By chain: eth_getBlockByNumber calls by the block number asked (hex), since the last clear. */
const blockReads = new Map<number, Map<string, number>>();
let started: BehindOtherNodes | undefined;
let rt: TestRuntime;

beforeAll(async () => {
  started = await startBehindHardhatAndGanache(
    "confirm-reads",
    (chainId, node) => {
      const reads = new Map<string, number>();
      blockReads.set(chainId, reads);
      return startRpcProxy(node.url, (method, _id, _response, call) => {
        const block = call.params?.[0];
        if (method === "eth_getBlockByNumber" && typeof block === "string")
          reads.set(block, (reads.get(block) ?? 0) + 1);
        return false;
      });
    },
    {
      CHAINGATE_TRACKER_INTERVAL_MS: "50",
      // Final three blocks deep (the transaction's own and two more): the confirm job reads blocks.
      CHAINGATE_CONFIRMATIONS: "3",
      CHAINGATE_RESEND_AFTER_SECONDS: "600",
    },
  );
  rt = started.rt;
}, 180_000);

afterAll(async () => {
  await started?.close();
});

describe.each([
  ["Hardhat", HARDHAT],
  ["Ganache", GANACHE],
] as const)("in front of %s", (_name, chainId) => {
  it("while the head stays a mined record's block is not read again; new heads read it, and it is confirmed three deep", async () => {
    const node = started!.nodes.get(chainId)!;
    const proxy = started!.proxies.get(chainId)!;
    const reads = blockReads.get(chainId)!;
    const wallet = await walletFundedOn(rt, node.url, chainId, PASSWORD);
    const sent = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      chain_id: chainId,
      transaction: { to: DEV_ACCOUNT_2, value: "7" },
    });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const hash = (sent.json as { tx_hash: string }).tx_hash;
    // Both nodes mine a block per transaction and none after it until told.
    expect(await waitUntil(async () => (await recordOf(rt, hash)).state === "mined", 20_000)).toBe(true);
    const block = toHex((await recordOf(rt, hash)).block_number!);

    proxy.reset();
    reads.clear();
    const heads = () => proxy.counts.get("eth_blockNumber") ?? 0;
    // Eight head reads: some forty passes over the one mined record.
    expect(await waitUntil(() => heads() >= 8, 60_000)).toBe(true);
    expect(reads.get(block) ?? 0).toBeLessThanOrEqual(1);
    expect((await recordOf(rt, hash)).state).toBe("mined");

    const before = reads.get(block) ?? 0;
    await nodeCall(node.url, "evm_mine", []);
    expect(await waitUntil(() => (reads.get(block) ?? 0) > before, 20_000)).toBe(true);
    expect((await recordOf(rt, hash)).state).toBe("mined");
    await nodeCall(node.url, "evm_mine", []);
    expect(await waitUntil(async () => (await recordOf(rt, hash)).state === "confirmed", 20_000)).toBe(true);
  }, 120_000);
});
