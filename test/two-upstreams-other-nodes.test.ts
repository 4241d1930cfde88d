/** Two Hardhat nodes, and two Ganache nodes, of one chain each behind chaingate: consensus reads, reads at an old block, and custody sends whose estimate and recipient code a quorum agrees on, with these nodes' own answers. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Hex, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envelope, native, nodeCall } from "../src/test-support/chain-helpers.js";
import { waitUntil } from "../src/test-support/cli.js";
import { DEV_ACCOUNT_2, DEV_PRIVATE_KEY } from "../src/test-support/evm-fixtures.js";
import { type OtherNode, startGanache, startHardhat } from "../src/test-support/other-nodes.js";
import { startTestRuntime, type TestRuntime } from "../src/test-support/test-runtime.js";

const PASSWORD = "two-upstreams-pw";
const dev = privateKeyToAccount(DEV_PRIVATE_KEY);

describe.each([
  ["hardhat", 31337],
  ["ganache", 1337],
] as const)("two %s nodes of one chain", (kind, chainId) => {
  const dir = mkdtempSync(join(tmpdir(), `chaingate-two-${kind}-`));
  let nodes: OtherNode[] = [];
  let rt: TestRuntime;

  beforeAll(async () => {
    nodes = await Promise.all(
      [0, 1].map((i) =>
        kind === "hardhat" ? startHardhat(join(dir, `node-${i}`), chainId) : startGanache(chainId),
      ),
    );
    const config = join(dir, "chains.json");
    writeFileSync(
      config,
      JSON.stringify({ chains: [{ chainId, upstreams: nodes.map((n) => ({ url: n.url })), finality: 1 }] }),
    );
    rt = await startTestRuntime({ env: { CHAINGATE_CONFIG: config, CHAINGATE_UPSTREAM_TIMEOUT_MS: "5000" } });
  }, 180_000);
  afterAll(async () => {
    await rt?.close();
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const minedOnBoth = (hash: string) =>
    waitUntil(async () => {
      for (const node of nodes)
        if ((await nodeCall(node.url, "eth_getTransactionReceipt", [hash])) === null) return false;
      return true;
    }, 30_000);

  /** The dev account's signed transfer, sent through chaingate: it reaches both nodes (the same nonce on each). */
  async function fund(to: Hex): Promise<void> {
    const nonce = Number(await nodeCall(nodes[0]!.url, "eth_getTransactionCount", [dev.address, "pending"]));
    const raw = await dev.signTransaction({
      chainId,
      nonce,
      to,
      value: parseEther("5"),
      gas: 21_000n,
      gasPrice: 20_000_000_000n,
    });
    const { json } = await rt.post("/", {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendRawTransaction",
      params: [raw],
    });
    const hash = (json as Envelope).result as string;
    expect(hash, JSON.stringify(json)).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await minedOnBoth(hash)).toBe(true);
  }

  it("consensus=2 reads agree on these nodes' answers, and a read at block 0 is answered", async () => {
    const balance = await native(rt, "eth_getBalance", [dev.address, "latest"], "?consensus=2");
    expect(balance.error, JSON.stringify(balance)).toBeUndefined();
    expect(balance.result).toBe(await nodeCall(nodes[0]!.url, "eth_getBalance", [dev.address, "latest"]));
    const code = await native(rt, "eth_getCode", [DEV_ACCOUNT_2, "latest"], "?consensus=2");
    expect(code.result, JSON.stringify(code)).toBe("0x");
    const old = await native(rt, "eth_getBalance", [DEV_ACCOUNT_2, "0x0"]);
    expect(old.error, JSON.stringify(old)).toBeUndefined();
  });

  it("custody sends whose gas estimate and recipient code both nodes must agree on are signed and reach both", async () => {
    const made = await rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
    const [wallet] = made.json as { id: string; address: Hex }[];
    await fund(wallet!.address);
    // A plain transfer (the recipient's code agreed), then a call with data (the estimate agreed).
    for (const transaction of [
      { to: DEV_ACCOUNT_2, value: "1" },
      { to: DEV_ACCOUNT_2, value: "1", data: "0x1234" },
    ]) {
      const sent = await rt.post("/transaction", { wallet_id: wallet!.id, password: PASSWORD, transaction });
      const hash = (sent.json as { tx_hash?: string }).tx_hash;
      expect(hash, JSON.stringify(sent.json)).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await minedOnBoth(hash!)).toBe(true);
    }
  });
});
