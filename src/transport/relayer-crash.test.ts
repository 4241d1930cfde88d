import { encodeEventTopics, encodeFunctionData, type Hex } from "viem";
import { expect, it } from "vitest";
import { BridgeERC20, MessageEndpoint } from "../contracts/artifacts.generated.js";
import { anvilsFor, cliDataDir, nativeResult, rpc, startCli, waitUntil } from "../test-support/cli.js";

const PASSWORD = "relay-crash";
const RECIPIENT = "0x000000000000000000000000000000000000c0de";

const dataDir = cliDataDir("relay-crash");

it("kill -9 after a transport was sent and before it was delivered: after restart it is delivered exactly once", async () => {
  // The relayer's first pass runs at start; the next would come in ten minutes, i.e. never in this test.
  const first = await startCli(dataDir, {
    CHAINGATE_RELAYER_INTERVAL_MS: "600000",
    CHAINGATE_TRACKER_INTERVAL_MS: "100",
  });
  const wallet = await fetch(`${first.url}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 }),
  });
  const { id } = ((await wallet.json()) as { id: string }[])[0]!;
  await nativeResult(first.url, "register_new_member", { name: "Peer", chain_id: 1002, role: "PARTICIPANT" });
  const token = await nativeResult(first.url, "create_new_ERC20_token", {
    wallet_id: id,
    password: PASSWORD,
    name: "Crash Coin",
    symbol: "CRASH",
    initial_supply: "1000",
  });
  await waitUntil(
    async () => (await rpc(first.url, "eth_getTransactionReceipt", [token.tx_hash])) !== null,
    10_000,
  );
  const sent = await nativeResult(first.url, "trasport_token", {
    wallet_id: id,
    password: PASSWORD,
    token: token.address,
    to: RECIPIENT,
    amount: "250",
    destination_chain_id: 1002,
  });
  await waitUntil(
    async () => (await rpc(first.url, "eth_getTransactionReceipt", [sent.tx_hash])) !== null,
    10_000,
  );
  const before = await nativeResult(first.url, "list_all_transports", {});
  expect((before.transports as { id: string; state: string }[])[0]).toMatchObject({
    id: sent.transport_id,
    state: "sent",
  });
  // Let anvil write its state file (every 2 s) so the chains survive the crash with the transport on them.
  await new Promise((r) => setTimeout(r, 2_500));
  first.child.kill("SIGKILL");
  await first.exited;
  expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);

  const second = await startCli(dataDir, {
    CHAINGATE_RELAYER_INTERVAL_MS: "100",
    CHAINGATE_TRACKER_INTERVAL_MS: "100",
  });
  try {
    const delivered = await waitUntil(async () => {
      const list = await nativeResult(second.url, "list_all_transports", { state: "delivered" });
      return (list.transports as unknown[]).length === 1;
    }, 30_000);
    expect(delivered).toBe(true);
    const balance = await rpc(
      second.url,
      "eth_call",
      [
        {
          to: token.address,
          data: encodeFunctionData({ abi: BridgeERC20.abi, functionName: "balanceOf", args: [RECIPIENT] }),
        },
        "latest",
      ],
      "?chain_id=1002",
    );
    expect(BigInt(balance as string)).toBe(250n);
    // A few more relayer passes: still exactly one execution on the destination.
    await new Promise((r) => setTimeout(r, 500));
    const endpoint = (
      (await rpc(second.url, "eth_getTransactionReceipt", [sent.tx_hash])) as { logs: { address: string }[] }
    ).logs.at(-1)!.address;
    const logs = await rpc(
      second.url,
      "eth_getLogs",
      [
        {
          address: endpoint,
          topics: encodeEventTopics({
            abi: MessageEndpoint.abi,
            eventName: "MessageDelivered",
            args: { id: sent.transport_id as Hex },
          }),
          fromBlock: "0x0",
          toBlock: "latest",
        },
      ],
      "?chain_id=1002",
    );
    expect(logs as unknown[]).toHaveLength(1);
  } finally {
    second.child.kill("SIGTERM");
    await second.exited;
  }
}, 180_000);
