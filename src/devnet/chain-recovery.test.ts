import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nodeCall, result } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { newWallet, retryUntilHashed, sendWithKey } from "../test-support/token-helpers.js";

const receiptOf = (rt: TestRuntime, hash: string) =>
  result<{ status: string; blockHash: string } | null>(rt, "eth_getTransactionReceipt", [hash]);

/** The balance the chain's saved state gives `address`; 0 when the file or the account is not there yet. */
function savedBalance(statePath: string, address: string): bigint {
  try {
    const state = JSON.parse(readFileSync(statePath, "utf8")) as {
      accounts: Record<string, { balance: string }>;
    };
    return BigInt(state.accounts[address.toLowerCase()]?.balance ?? 0);
  } catch {
    return 0n;
  }
}

/** What still disagrees with the chain for `address`, or undefined once every hash is mined and every record agrees. */
async function unsettled(rt: TestRuntime, address: string, hashes: string[]): Promise<string | undefined> {
  const problems: string[] = [];
  for (const hash of hashes) {
    const receipt = await receiptOf(rt, hash);
    if (receipt?.status !== "0x1") problems.push(`${hash}: receipt ${JSON.stringify(receipt)}`);
  }
  const rows = await rt.store.db
    .selectFrom("transactions")
    .select(["tx_hash", "nonce", "state", "block_hash", "error"])
    .where("from_address", "=", address)
    .orderBy("nonce")
    .execute();
  for (const row of rows) {
    const open = row.state === "queued" || row.state === "sent";
    const mined = row.state === "mined" || row.state === "confirmed";
    // A record that says mined or confirmed names a block the chain has, with that transaction in it.
    const lies = mined && (await receiptOf(rt, row.tx_hash))?.blockHash !== row.block_hash;
    if (open || lies) problems.push(`record ${JSON.stringify(row)}`);
  }
  if (problems.length === 0) return undefined;
  // The records the chain did not take say why: the report needs them beside what is left.
  const others = rows.filter((r) => r.state !== "confirmed" && r.state !== "mined");
  return [...problems, ...others.map((r) => `other ${JSON.stringify(r)}`)].join("\n");
}

/** Waits until `unsettled` has nothing to report; a timeout names what was left. */
async function settles(rt: TestRuntime, address: string, hashes: string[], ms: number): Promise<void> {
  let left: string | undefined;
  const settled = await waitUntil(async () => {
    left = await unsettled(rt, address, hashes);
    return left === undefined;
  }, ms);
  expect(settled, `still unsettled:\n${left}`).toBe(true);
}

describe("an embedded chain that dies or goes back", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });

  const send = (walletId: string, key: string) => sendWithKey(rt, walletId, key);

  it("kill -9 of the home anvil under a burst: it is back within seconds, every hash is mined, no record lies", async () => {
    const wallet = await newWallet(rt);
    // The funding is in the node's saved state before the crash (the guard saves it every second).
    const statePath = join(rt.dataDir, "devnet", "1001", "state.json");
    expect(await waitUntil(() => savedBalance(statePath, wallet.address) > 0n, 30_000)).toBe(true);
    const node = rt.devnet!.nodes[0]!;
    const killedPid = node.pid;
    const keys = Array.from({ length: 30 }, (_, i) => `crash-${i}`);
    const hashes = new Map<string, string>();
    const burst = Promise.all(
      keys.map(async (key) => {
        const answer = await send(wallet.id, key);
        if (answer.status === 200) hashes.set(key, (answer.json as { tx_hash: string }).tx_hash);
        else expect(answer.status, JSON.stringify(answer.json)).toBe(503);
      }),
    );
    await new Promise((r) => setTimeout(r, 150));
    process.kill(killedPid, "SIGKILL");
    await burst;

    // The supervisor brings it back, and says so.
    const network = async () =>
      (
        (await (await fetch(`${rt.url}/network`)).json()) as {
          chains: { chain_id: number; embedded: { status: string; restarts: number } | null }[];
        }
      ).chains.find((c) => c.chain_id === 1001)!;
    expect(
      await waitUntil(async () => {
        const embedded = (await network()).embedded;
        return embedded?.status === "running" && embedded.restarts >= 1;
      }, 60_000),
    ).toBe(true);
    expect(node.pid).not.toBe(killedPid);
    expect(await waitUntil(async () => (await fetch(`${rt.url}/readyz`)).status === 200, 30_000)).toBe(true);

    // What did not get a hash is retried with its key: the stored transaction or a fresh one.
    expect(await retryUntilHashed((key) => send(wallet.id, key), keys, hashes)).toBe(true);
    await settles(rt, wallet.address, [...hashes.values()], 60_000);

    // The address moves on: its next transaction is mined.
    const next = await send(wallet.id, "after-crash");
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    const nextHash = (next.json as { tx_hash: string }).tx_hash;
    expect(await waitUntil(async () => (await receiptOf(rt, nextHash))?.status === "0x1", 30_000)).toBe(true);
  }, 180_000);

  it("a chain that goes back (its node restored older state) gets its lost transactions again, from their stored bytes", async () => {
    const wallet = await newWallet(rt);
    const node = rt.devnet!.nodes[0]!;
    const snapshot = await nodeCall(node.url, "evm_snapshot");
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await send(wallet.id, `rewind-${i}`);
      expect(answer.status).toBe(200);
      hashes.push((answer.json as { tx_hash: string }).tx_hash);
    }
    expect(
      await waitUntil(async () => {
        const rows = await rt.store.db
          .selectFrom("transactions")
          .select("state")
          .where("from_address", "=", wallet.address)
          .execute();
        return rows.length === 5 && rows.every((r) => r.state === "confirmed");
      }, 30_000),
    ).toBe(true);

    // The node loses those blocks: the records must not keep saying "confirmed".
    await nodeCall(node.url, "evm_revert", [snapshot]);
    expect(await receiptOf(rt, hashes[0]!)).toBeNull();
    await settles(rt, wallet.address, hashes, 60_000);
    const nonces = await Promise.all(
      hashes.map(async (h) =>
        Number((await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [h])).nonce),
      ),
    );
    expect(nonces).toEqual([0, 1, 2, 3, 4]);

    const next = await send(wallet.id, "rewind-next");
    expect(next.status).toBe(200);
    const nextHash = (next.json as { tx_hash: string }).tx_hash;
    expect(await waitUntil(async () => (await receiptOf(rt, nextHash))?.status === "0x1", 30_000)).toBe(true);
    expect(Number((await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [nextHash])).nonce)).toBe(
      5,
    );
  }, 120_000);

  it("a SIGTERM to the home chain's guard alone (chaingate not stopping): it saves, and is brought back with its blocks", async () => {
    const wallet = await newWallet(rt);
    const answer = await send(wallet.id, "guard-signal");
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    const hash = (answer.json as { tx_hash: string }).tx_hash;
    let before: { status: string; blockHash: string } | null = null;
    expect(
      await waitUntil(async () => {
        before = await receiptOf(rt, hash);
        return before?.status === "0x1";
      }, 30_000),
    ).toBe(true);
    const node = rt.devnet!.nodes[0]!;
    const restarts = node.restarts;
    // The guard is anvil's parent (the field after the command's name in /proc's stat).
    const guard = Number(readFileSync(`/proc/${node.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
    expect(readFileSync(`/proc/${guard}/cmdline`, "utf8")).toContain("chaingate-anvil-pid");
    process.kill(guard, "SIGTERM");
    // Down from the guard's exit on: the status says so through the grace, not "running".
    expect(await waitUntil(() => node.status === "restarting", 30_000)).toBe(true);
    // Past the grace given to a stop of chaingate's own (decision 215), the supervisor restarts it.
    expect(await waitUntil(() => node.restarts > restarts && node.status === "running", 60_000)).toBe(true);
    // The guard saved a last time before it stopped anvil: the block is the one the record names.
    expect(
      await waitUntil(
        async () => (await receiptOf(rt, hash).catch(() => null))?.blockHash !== undefined,
        30_000,
      ),
    ).toBe(true);
    expect((await receiptOf(rt, hash))?.blockHash).toBe(before!.blockHash);
  }, 120_000);
});
