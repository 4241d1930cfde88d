import { type Abi, encodeEventTopics, type Hex, keccak256, numberToHex } from "viem";
import { expect, it } from "vitest";
import { BridgeERC20, MessageEndpoint } from "../contracts/artifacts.generated.js";
import { nodeCall } from "../test-support/chain-helpers.js";
import { DEV_PRIVATE_KEY } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { startRpcProxy } from "../test-support/rpc-proxy.js";
import {
  newWallet,
  ok,
  read,
  sendTransport,
  settled,
  type TransportRow,
  waitFor,
} from "../test-support/token-helpers.js";
import { startReceiver } from "../test-support/webhook-receiver.js";

const own = ownNodes("forged-source");
const RECIPIENT = "0x000000000000000000000000000000000000f00d";
const SENT_TOPIC = encodeEventTopics({ abi: MessageEndpoint.abi, eventName: "MessageSent" })[0]!;

interface Log {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash?: Hex;
  transactionHash: Hex;
  logIndex?: Hex;
}

/** The forged twin of a real MessageSent: a fresh id, every other field the same. */
const twinId = (id: Hex, salt: string) => keccak256(`${id}${salt}` as Hex);

it("an upstream that forges MessageSent logs and receipts moves no value: disputed, reported, never delivered", async () => {
  const a = await own.anvil("a", { chainId: 1001 });
  const b = await own.anvil("b", { chainId: 1002 });

  // The forger: a proxy in front of the honest node that adds a forged twin to every real MessageSent
  // it shows (same transaction, fresh id), and invents one more in every block range it is asked for
  // (a transport never sent, with a receipt made up to match).
  let forging = true;
  let template: Log | undefined;
  const invented = new Map<Hex, Record<string, unknown>>();
  const forgedIds = new Set<string>();
  const proxy = await startRpcProxy(a.url, undefined, async (call, answer) => {
    if (!forging) return answer;
    if (call.method === "eth_getLogs") {
      const query = call.params[0] as { topics?: unknown[]; toBlock?: Hex };
      if (!Array.isArray(query.topics) || query.topics[0] !== SENT_TOPIC) return answer;
      const logs = (answer.result as Log[]) ?? [];
      template ??= logs[0];
      const twins = logs.map((log) => ({
        ...log,
        topics: [log.topics[0]!, twinId(log.topics[1]!, "01"), ...log.topics.slice(2)],
      }));
      for (const twin of twins) forgedIds.add(twin.topics[1]!);
      if (template === undefined || query.toBlock === undefined) return { result: [...logs, ...twins] };
      const block = (await nodeCall(a.url, "eth_getBlockByNumber", [query.toBlock, false])) as { hash: Hex };
      const txHash = keccak256(`0xfeed${query.toBlock.slice(2)}` as Hex);
      const fake: Log = {
        ...template,
        topics: [SENT_TOPIC, twinId(txHash, "02"), ...template.topics.slice(2)],
        blockNumber: query.toBlock,
        blockHash: block.hash,
        transactionHash: txHash,
        logIndex: "0x0",
      };
      forgedIds.add(fake.topics[1]!);
      invented.set(txHash, {
        transactionHash: txHash,
        status: "0x1",
        blockHash: block.hash,
        blockNumber: query.toBlock,
        logs: [fake],
      });
      return { result: [...logs, ...twins, fake] };
    }
    if (call.method === "eth_getTransactionReceipt") {
      const hash = call.params[0] as Hex;
      if (invented.has(hash)) return { result: invented.get(hash) };
      const receipt = answer.result as { logs: Log[] } | null;
      if (receipt === null) return answer;
      const twins = receipt.logs
        .filter((log) => log.topics[0] === SENT_TOPIC)
        .map((log, i) => ({
          ...log,
          topics: [log.topics[0]!, twinId(log.topics[1]!, "01"), ...log.topics.slice(2)],
          logIndex: numberToHex(100 + i),
        }));
      return { result: { ...receipt, logs: [...receipt.logs, ...twins] } };
    }
    return answer;
  });

  const config = own.configFile({
    homeChainId: 1001,
    chains: [
      { chainId: 1001, upstreams: [{ url: a.url }, { url: proxy.url }], finality: 1 },
      { chainId: 1002, upstreams: [{ url: b.url }], finality: 1 },
    ],
  });
  const logLines: string[] = [];
  const rt = await own.runtime({
    deploy: true,
    logLines,
    env: {
      CHAINGATE_CONFIG: config,
      CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY,
      CHAINGATE_RELAYER_INTERVAL_MS: "100",
      CHAINGATE_TRACKER_INTERVAL_MS: "100",
      CHAINGATE_WEBHOOK_ALLOW_PRIVATE: "true",
      CHAINGATE_WEBHOOK_INTERVAL_MS: "50",
    },
  });
  const receiver = await startReceiver();
  try {
    expect((await rt.post("/webhooks", { url: receiver.url, events: ["transport.*"] })).status).toBe(200);
    const alice = await newWallet(rt);
    await nodeCall(a.url, "anvil_setBalance", [alice.address, "0x56BC75E2D63100000"]);
    await ok(rt, "register_new_member", { name: "Peer", chain_id: 1002, role: "PARTICIPANT" });
    const token = await ok(rt, "create_new_ERC20_token", {
      wallet_id: alice.id,
      password: "token-test-password",
      name: "Trust Coin",
      symbol: "TRUST",
      initial_supply: "1000",
    });
    await waitFor("the token", async () =>
      (await nodeCall(a.url, "eth_getTransactionReceipt", [token.tx_hash])) === null ? undefined : true,
    );
    const send = (amount: string) =>
      sendTransport(rt, { walletId: alice.id, token: token.address as string, to: RECIPIENT, amount });
    const sent = await send("25");
    const real = await settled(rt, sent);
    expect(real.state).toBe("delivered");

    // New blocks until the relayer has asked the forger for a range (the pool takes upstreams in turn).
    const list = async () =>
      (
        await ok<{ transports: (TransportRow & { source_confirmations: number | null })[] }>(
          rt,
          "list_all_transports",
          { limit: 1000 },
        )
      ).transports;
    const disputed = await waitFor(
      "a forged transport held as disputed",
      async () => {
        await nodeCall(a.url, "evm_mine", []);
        const held = (await list()).filter((t) => t.state === "awaiting_quorum");
        return held.length > 0 ? held : undefined;
      },
      45_000,
    );
    for (const held of disputed) {
      expect(forgedIds.has(held.id)).toBe(true);
      expect(held.error).toMatch(/upstream confirmations needed/);
    }
    // Whatever the forger showed, the recipient holds the 25 really sent, and no forged id was executed.
    const deliveredIds = (
      (await nodeCall(b.url, "eth_getLogs", [
        {
          address: rt.system!.endpoint,
          topics: [encodeEventTopics({ abi: MessageEndpoint.abi, eventName: "MessageDelivered" })[0]],
          fromBlock: "0x0",
          toBlock: "latest",
        },
      ])) as Log[]
    ).map((log) => log.topics[1]!);
    expect(deliveredIds).toEqual([sent]);
    // The bridged token has the same address on 1002 (the endpoint deploys it with the same salt).
    expect(
      await read(rt, 1002, token.address as string, BridgeERC20.abi as Abi, "balanceOf", [RECIPIENT]),
    ).toBe(25n);
    expect(real.source_confirmations).toBe(2);

    // The operator is told: the log, the metric, the webhook.
    expect(logLines.some((line) => line.includes("transport held"))).toBe(true);
    const metrics = await (await fetch(`${rt.url}/metrics`)).text();
    expect(metrics).toMatch(/chaingate_transports\{kind="ERC20",state="awaiting_quorum"\} [1-9]/);
    await waitFor("the webhook event", async () =>
      receiver.deliveries.some((d) => d.body.type === "transport.awaiting_quorum") ? true : undefined,
    );

    // Both upstreams honest again: a new transport is delivered as before, confirmed by both.
    forging = false;
    const again = await send("5");
    const second = await settled(rt, again);
    expect(second.state).toBe("delivered");
    expect(second.source_confirmations).toBe(2);
    expect(
      await read(rt, 1002, token.address as string, BridgeERC20.abi as Abi, "balanceOf", [RECIPIENT]),
    ).toBe(30n);
    // The forged ones never move: with no upstream showing them now, their source is simply not on chain.
    for (const held of disputed) {
      const now = (await list()).find((t) => t.id === held.id)!;
      expect(["awaiting_quorum", "reorged"]).toContain(now.state);
    }
  } finally {
    await receiver.down();
    await proxy.close();
  }
}, 120_000);
