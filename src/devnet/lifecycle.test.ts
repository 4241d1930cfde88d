import { describe, expect, it } from "vitest";
import { anvilsFor, cliDataDir, rpc, startCli, waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT, signedDevTransfer } from "../test-support/evm-fixtures.js";

describe("the embedded chains live and die with chaingate", () => {
  const dataDir = cliDataDir("lifecycle");

  it("SIGTERM stops chaingate and both anvils; the chain state survives the restart", async () => {
    const first = await startCli(dataDir);
    expect(anvilsFor(dataDir)).toHaveLength(2);
    expect(await rpc(first.url, "eth_chainId")).toBe("0x3e9");
    // Signed by the client (the gateway holds no node accounts), sent through the gateway.
    const nonce = Number(await rpc(first.url, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]));
    const raw = await signedDevTransfer(nonce);
    const hash = await rpc(first.url, "eth_sendRawTransaction", [raw]);
    // anvil answers a send before its automine has mined the block: the head is read once the
    // receipt exists, so it is the head the restart must bring back.
    expect(
      await waitUntil(
        async () => (await rpc(first.url, "eth_getTransactionReceipt", [hash])) !== null,
        30_000,
      ),
    ).toBe(true);
    const head = Number(await rpc(first.url, "eth_blockNumber"));
    expect(head).toBeGreaterThanOrEqual(1);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 5_000)).toBe(true);

    const second = await startCli(dataDir);
    expect(Number(await rpc(second.url, "eth_blockNumber"))).toBe(head);
    second.child.kill("SIGTERM");
    await second.exited;
    expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 5_000)).toBe(true);
  });

  it("kill -9 of chaingate leaves no anvil behind, and the next start works", async () => {
    const victim = await startCli(dataDir);
    expect(anvilsFor(dataDir)).toHaveLength(2);
    victim.child.kill("SIGKILL");
    await victim.exited;
    expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);

    const next = await startCli(dataDir);
    expect(await rpc(next.url, "eth_chainId")).toBe("0x3e9");
    expect(anvilsFor(dataDir)).toHaveLength(2);
    next.child.kill("SIGTERM");
    await next.exited;
    expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 5_000)).toBe(true);
  });
});
