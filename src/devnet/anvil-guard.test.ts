/** An embedded anvil stopped while it mines a large block comes back with every counted transaction findable (decision 191). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { keccak256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2, DEV_PRIVATE_KEY } from "../test-support/evm-fixtures.js";
import { type AnvilNode, startAnvil } from "./anvil-node.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-anvil-guard-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = () => ({ chainId: 1001, dir, blockTime: 0, logger: pino({ level: "silent" }) });

it("stopped while it mines a block of 400 transfers, anvil comes back with each transaction the chain counts", async () => {
  const account = privateKeyToAccount(DEV_PRIVATE_KEY);
  const raws = await Promise.all(
    Array.from({ length: 400 }, (_, nonce) =>
      account.signTransaction({
        chainId: 1001,
        type: "eip1559",
        nonce,
        to: DEV_ACCOUNT_2,
        value: BigInt(nonce + 1),
        gas: 21_000n,
        maxFeePerGas: 10_000_000_000n,
        maxPriorityFeePerGas: 1n,
      }),
    ),
  );
  let node: AnvilNode = await startAnvil(options());
  try {
    // Pooled without mining, then mined as one block: the stop below lands while that block is
    // made, the moment the old guard's SIGTERM left anvil's accounts ahead of its blocks.
    await nodeCall(node.url, "evm_setAutomine", [false]);
    for (const raw of raws) await nodeCall(node.url, "eth_sendRawTransaction", [raw]);
    const mining = nodeCall(node.url, "evm_mine").catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    await node.stop();
    await mining;

    node = await startAnvil(options());
    const counted = Number(await nodeCall(node.url, "eth_getTransactionCount", [DEV_ACCOUNT, "latest"]));
    const missing: number[] = [];
    for (let nonce = 0; nonce < counted; nonce++)
      if ((await nodeCall(node.url, "eth_getTransactionByHash", [keccak256(raws[nonce]!)])) === null)
        missing.push(nonce);
    expect({ counted, missing }).toEqual({ counted: 400, missing: [] });
  } finally {
    await node.stop();
  }
}, 120_000);
