/** A deployment's code read from a node behind the one that gave its receipt is waited for, not taken as "0x". */
import { getContractAddress, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { nodeCall } from "../test-support/chain-helpers.js";
import { DEV_PRIVATE_KEY } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import type { Chain } from "../upstream/chain-registry.js";
import { UpstreamPool } from "../upstream/upstream-pool.js";
import { deployedCodeAt } from "./chain-calls.js";

const own = ownNodes("chain-calls");
// Init code that stores the one-byte runtime 0x01.
const INIT = "0x600160005360016000f3" as const;
const account = privateKeyToAccount(DEV_PRIVATE_KEY);

let proxy: RpcProxy;
let chain: Chain;
let deployment: Hex;
let sent: Promise<unknown> | undefined;

beforeAll(async () => {
  const node = await own.anvil("behind");
  deployment = await account.signTransaction({
    chainId: 1001,
    type: "eip1559",
    nonce: 0,
    data: INIT,
    gas: 100_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  // The node is behind: it gets the deployment only after it has answered "0x" for the address once.
  proxy = await startRpcProxy(node.url, undefined, (call, answer) => {
    if (call.method === "eth_getCode" && answer.result === "0x" && sent === undefined)
      sent = nodeCall(node.url, "eth_sendRawTransaction", [deployment]);
    return answer;
  });
  const pool = new UpstreamPool(1001, [proxy.url], 5_000, upstreamTraitsOf, {
    verified: new Map([[proxy.url, 1001]]),
  });
  chain = { chainId: 1001, name: "home", pool };
});

afterAll(async () => {
  await chain.pool.close();
  await proxy.close();
});

it("reads again until the node has the deployment's block, and answers its code", async () => {
  const address = getContractAddress({ from: account.address, nonce: 0n });
  expect(await deployedCodeAt(chain, address)).toBe("0x01");
  expect(sent).toBeDefined();
  await sent;
});

it("answers 0x once its deadline has passed with no code at the address", async () => {
  const nowhere = getContractAddress({ from: account.address, nonce: 99n });
  expect(await deployedCodeAt(chain, nowhere, 300)).toBe("0x");
});
