import { ethers } from "ethers";
import { createPublicClient, createWalletClient, defineChain, type Hex, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  DEV_ACCOUNT_2,
  DEV_PRIVATE_KEY,
  EMITTER_INIT_CODE,
  EMITTER_TOPIC,
  REVERTER_INIT_CODE,
} from "../src/test-support/evm-fixtures.js";
import { suiteRuntime } from "../src/test-support/test-runtime.js";

/** anvil's third default key: kept apart from the first so the two libraries never share a nonce. */
const SECOND_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";

describe("real client libraries use chaingate as their provider", () => {
  const rt = suiteRuntime();

  it("ethers v6 reads blocks and balances, sends a signed transaction, waits and reads logs", async () => {
    // ethers reuses identical answers for 250 ms by default; on an automining chain that serves a
    // stale pending nonce for back-to-back sends, so the test turns it off, as dapps on fast chains do.
    const provider = new ethers.JsonRpcProvider(`${rt.url}/`, undefined, { polling: true, cacheTimeout: -1 });
    provider.pollingInterval = 50;
    const network = await provider.getNetwork();
    expect(network.chainId).toBe(1001n);
    const wallet = new ethers.Wallet(DEV_PRIVATE_KEY, provider);
    expect(await provider.getBalance(wallet.address)).toBeGreaterThan(0n);
    const block = await provider.getBlock("latest");
    expect(block?.hash).toMatch(/^0x[0-9a-f]{64}$/);

    const deploy = await wallet.sendTransaction({ data: EMITTER_INIT_CODE });
    const deployed = await deploy.wait();
    expect(deployed?.status).toBe(1);
    const emitter = deployed!.contractAddress!;
    const call = await wallet.sendTransaction({ to: emitter });
    const receipt = await call.wait();
    expect(receipt?.logs.map((l) => l.topics[0])).toEqual([EMITTER_TOPIC]);
    const logs = await provider.getLogs({ address: emitter, fromBlock: 0, toBlock: "latest" });
    expect(logs.map((l) => l.transactionHash)).toContain(call.hash);

    const before = await provider.getBalance(DEV_ACCOUNT_2);
    const transfer = await wallet.sendTransaction({ to: DEV_ACCOUNT_2, value: 12345n });
    await transfer.wait();
    expect((await provider.getBalance(DEV_ACCOUNT_2)) - before).toBe(12345n);

    // ethers' event machinery polls through eth_newFilter / eth_getFilterChanges on the gateway.
    const seen = new Promise<string>((resolve) => {
      void provider.once({ address: emitter, topics: [EMITTER_TOPIC] }, (log: ethers.Log) =>
        resolve(log.transactionHash),
      );
    });
    await new Promise((r) => setTimeout(r, 300));
    const again = await wallet.sendTransaction({ to: emitter });
    await again.wait();
    expect(await seen).toBe(again.hash);
    provider.destroy();
  });

  it("viem reads, sends a signed transaction, waits for the receipt, reads logs, and sees revert data", async () => {
    const chain = defineChain({
      id: 1001,
      name: "chaingate devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [`${rt.url}/`] } },
    });
    const transport = http(`${rt.url}/`);
    const client = createPublicClient({ chain, transport, pollingInterval: 50 });
    const account = privateKeyToAccount(SECOND_KEY as Hex);
    const wallet = createWalletClient({ chain, transport, account });

    expect(await client.getChainId()).toBe(1001);
    expect(await client.getBalance({ address: account.address })).toBeGreaterThan(parseEther("1"));
    const latest = await client.getBlock();
    expect(latest.number).toBeGreaterThanOrEqual(0n);

    const deployHash = await wallet.sendTransaction({ data: EMITTER_INIT_CODE });
    const deployReceipt = await client.waitForTransactionReceipt({ hash: deployHash });
    expect(deployReceipt.status).toBe("success");
    const emitter = deployReceipt.contractAddress!;
    const hash = await wallet.sendTransaction({ to: emitter });
    const receipt = await client.waitForTransactionReceipt({ hash });
    expect(receipt.logs[0]?.topics[0]).toBe(EMITTER_TOPIC);
    const logs = await client.getLogs({ address: emitter, fromBlock: 0n });
    expect(logs.map((l) => l.transactionHash)).toContain(hash);

    const reverterHash = await wallet.sendTransaction({ data: REVERTER_INIT_CODE });
    const reverter = (await client.waitForTransactionReceipt({ hash: reverterHash })).contractAddress!;
    const failure = await client.call({ to: reverter }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).not.toBeNull();
    expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).toMatch(/deadbeef/);
  });
});
