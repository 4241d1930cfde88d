/** Decision 193 in front of Hardhat and Ganache: a record dropped while the node lagged follows its own receipt once the node shows it. */
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

const PASSWORD = "drop-watch-other-nodes";
/** What a node that lags behind the one that took the send does not know yet. */
const LAGGING = new Set(["eth_getTransactionByHash", "eth_getTransactionReceipt"]);
/** Chains whose node knows no transaction by hash, nor any receipt, while it counts their nonces. */
const lagging = new Set<number>();
let started: BehindOtherNodes | undefined;
let rt: TestRuntime;

beforeAll(async () => {
  started = await startBehindHardhatAndGanache(
    "drop-watch",
    (chainId, node) =>
      startRpcProxy(
        node.url,
        undefined,
        (call, answer) => (lagging.has(chainId) && LAGGING.has(call.method) ? { result: null } : answer),
        { batches: true },
      ),
    { CHAINGATE_TRACKER_INTERVAL_MS: "100", CHAINGATE_RESEND_AFTER_SECONDS: "1" },
  );
  rt = started.rt;
}, 180_000);

afterAll(async () => {
  await started?.close();
});

// Hardhat refuses the resent bytes of a mined transaction ("Nonce too low"): the record is dropped.
// Ganache answers their hash again, as for a first send: the record stays sent, resent each time.
describe.each([
  ["Hardhat", HARDHAT, "dropped"],
  ["Ganache", GANACHE, "resent"],
] as const)("in front of %s", (_name, chainId, whileLagging) => {
  it("a record resent while the node lagged moves to its receipt's block once the node shows it", async () => {
    const node = started!.nodes.get(chainId)!;
    const wallet = await walletFundedOn(rt, node.url, chainId, PASSWORD);

    lagging.add(chainId);
    const sent = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      chain_id: chainId,
      transaction: { to: DEV_ACCOUNT_2, value: "7" },
    });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const hash = (sent.json as { tx_hash: string }).tx_hash;
    // The node mined it at once; lagging, it shows neither it nor its receipt, so the tracker resends
    // it. Hardhat refuses the used nonce and the hash is unknown: dropped. Ganache takes it again.
    const whileLagged = async () => {
      const row = await recordOf(rt, hash);
      return whileLagging === "dropped"
        ? row.state === "dropped"
        : row.state === "sent" && row.broadcasts >= 2;
    };
    expect(await waitUntil(whileLagged, 20_000)).toBe(true);
    const receipt = (await nodeCall(node.url, "eth_getTransactionReceipt", [hash])) as { blockHash: string };

    lagging.delete(chainId);
    // The chain goes on: a receipt is asked again at a new head (decision 187).
    await nodeCall(node.url, "evm_mine", []);
    expect(
      await waitUntil(async () => ["mined", "confirmed"].includes((await recordOf(rt, hash)).state), 20_000),
    ).toBe(true);
    expect(await recordOf(rt, hash)).toMatchObject({ block_hash: receipt.blockHash, error: null });
  }, 120_000);
});
