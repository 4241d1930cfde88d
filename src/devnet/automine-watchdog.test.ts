import { mkdtempSync, rmSync } from "node:fs";

import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_PRIVATE_KEY, signedDevTransfer } from "../test-support/evm-fixtures.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { type AnvilNode, startAnvil } from "./anvil-node.js";
import { startAutomineWatchdog } from "./automine-watchdog.js";

let dir: string;
let node: AnvilNode;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chaingate-watchdog-"));
  node = await startAnvil({ chainId: 1001, dir, blockTime: 0, logger: pino({ level: "silent" }) });
});
afterAll(async () => {
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const signed = signedDevTransfer;

/**
 * The fault replayed: the node says it automines, yet a ready transaction sits in its pool. Behind
 * this proxy anvil's automine is off (so nothing takes the transaction), and the proxy answers
 * anvil_getAutomine as the racing node would: true. Everything else is anvil's own answer.
 */
function racingNode(target: string): Promise<RpcProxy> {
  return startRpcProxy(target, (method, id, response) => {
    if (method !== "anvil_getAutomine") return false;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ jsonrpc: "2.0", id, result: true }));
    return true;
  });
}

/** The watchdog on `url`, checking every 100 ms; the lines it logs at warn and above. */
function watching(url: string) {
  const lines: string[] = [];
  const stop = startAutomineWatchdog({
    url,
    logger: pino({ level: "warn" }, { write: (line: string) => void lines.push(line) }),
    intervalMs: 100,
  });
  return { lines, stop };
}

it("a node whose automine is off on purpose is left alone", async () => {
  await nodeCall(node.url, "evm_setAutomine", [false]);
  const hash = (await nodeCall(node.url, "eth_sendRawTransaction", [await signed(0)])) as string;
  const stop = startAutomineWatchdog({ url: node.url, logger: pino({ level: "silent" }), intervalMs: 50 });
  try {
    await new Promise((r) => setTimeout(r, 500));
    expect(await nodeCall(node.url, "eth_getTransactionReceipt", [hash])).toBeNull();
  } finally {
    stop();
    // Leave the pool empty for the next test: mine what is there by hand.
    await nodeCall(node.url, "evm_mine");
  }
});

it("a ready transaction the automining node left in its pool is mined; a gapped one is left waiting", async () => {
  const proxy = await racingNode(node.url);
  await nodeCall(node.url, "evm_setAutomine", [false]);
  const ready = (await nodeCall(node.url, "eth_sendRawTransaction", [await signed(1)])) as string;
  const gapped = (await nodeCall(node.url, "eth_sendRawTransaction", [await signed(5)])) as string;
  const { lines, stop } = watching(proxy.url);
  try {
    expect(
      await waitUntil(
        async () => (await nodeCall(node.url, "eth_getTransactionReceipt", [ready])) !== null,
        30_000,
      ),
    ).toBe(true);
    expect(lines.some((l) => l.includes("unmined"))).toBe(true);
    // Blocks mined for the ready one leave the gapped one in the pool, as a real node would.
    expect(await nodeCall(node.url, "eth_getTransactionReceipt", [gapped])).toBeNull();
    expect(await nodeCall(node.url, "txpool_status")).toMatchObject({ pending: "0x0", queued: "0x1" });
  } finally {
    stop();
    await proxy.close();
  }
});

it("a sender whose next nonce anvil left in 'queued' gets its pool sent again, same bytes, and it is mined", async () => {
  await nodeCall(node.url, "evm_setAutomine", [true]);
  const account = privateKeyToAccount(DEV_PRIVATE_KEY);
  // The earlier test's gapped transaction goes: this one starts from an empty pool.
  await nodeCall(node.url, "anvil_removePoolTransactions", [account.address]);
  const next = Number(
    BigInt((await nodeCall(node.url, "eth_getTransactionCount", [account.address, "latest"])) as string),
  );
  // The fault replayed: the sender's next transaction sits in "queued" and nothing promotes it
  // (anvil_setNonce moves the account past the gap without telling the pool, as the race does).
  const first = (await nodeCall(node.url, "eth_sendRawTransaction", [await signed(next + 1)])) as string;
  const second = (await nodeCall(node.url, "eth_sendRawTransaction", [await signed(next + 2)])) as string;
  await nodeCall(node.url, "anvil_setNonce", [account.address, `0x${(next + 1).toString(16)}`]);
  expect(await nodeCall(node.url, "txpool_status")).toMatchObject({ pending: "0x0", queued: "0x2" });
  const { lines, stop } = watching(node.url);
  try {
    for (const hash of [first, second]) {
      expect(
        await waitUntil(
          async () => (await nodeCall(node.url, "eth_getTransactionReceipt", [hash])) !== null,
          30_000,
        ),
        hash,
      ).toBe(true);
    }
    expect(lines.some((l) => l.includes("unpromoted"))).toBe(true);
  } finally {
    stop();
  }
});
