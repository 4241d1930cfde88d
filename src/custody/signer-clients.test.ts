import { JsonRpcProvider, TypedDataEncoder, verifyMessage, verifyTypedData } from "ethers";
import { createPublicClient, createWalletClient, defineChain, http, parseEther } from "viem";
import { describe, expect, it } from "vitest";
import { Web3 } from "web3";
import { cast } from "../test-support/cast.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "signer-client-password";

/** A new custody wallet's one address, locked. */
async function lockedAddress(rt: TestRuntime): Promise<`0x${string}`> {
  const { json } = await rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
  return (json as { address: `0x${string}` }[])[0]!.address;
}

/** A custody wallet, unlocked over JSON-RPC as a client would (personal_unlockAccount). */
async function custodyAddress(rt: TestRuntime): Promise<`0x${string}`> {
  const address = await lockedAddress(rt);
  const unlocked = await rt.post("/", {
    jsonrpc: "2.0",
    id: 1,
    method: "personal_unlockAccount",
    params: [address, PASSWORD, 600],
  });
  expect(unlocked.json).toMatchObject({ result: true });
  return address;
}

const TYPED: {
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
  types: Record<string, { name: string; type: string }[]>;
  message: Record<string, unknown>;
} = {
  domain: { name: "chaingate", version: "1", chainId: 1001, verifyingContract: DEV_ACCOUNT_2 },
  types: {
    Mail: [
      { name: "to", type: "address" },
      { name: "amount", type: "uint256" },
      { name: "note", type: "string" },
    ],
  },
  message: { to: DEV_ACCOUNT_2, amount: 12345678901234567890n, note: "hello" },
};

describe("chaingate as the signer of real client libraries", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });

  it("ethers v6 JsonRpcSigner: sendTransaction is mined, signMessage and signTypedData recover to the custody address", async () => {
    const address = await custodyAddress(rt);
    const provider = new JsonRpcProvider(rt.url, undefined, { staticNetwork: true, cacheTimeout: -1 });
    try {
      const signer = await provider.getSigner(address);
      const sent = await signer.sendTransaction({ to: DEV_ACCOUNT_2, value: 1000n });
      const receipt = await sent.wait(1, 120_000);
      expect(receipt?.status).toBe(1);
      expect(receipt?.from.toLowerCase()).toBe(address.toLowerCase());

      const signature = await signer.signMessage("chaingate signs for ethers");
      expect(verifyMessage("chaingate signs for ethers", signature)).toBe(address);

      const typed = await signer.signTypedData(TYPED.domain, TYPED.types, TYPED.message);
      expect(verifyTypedData(TYPED.domain, TYPED.types, TYPED.message, typed)).toBe(address);
      expect(TypedDataEncoder.hash(TYPED.domain, TYPED.types, TYPED.message)).toMatch(/^0x/);
    } finally {
      provider.destroy();
    }
  });

  it("viem wallet client with a JSON-RPC account: sendTransaction is mined", async () => {
    const address = await custodyAddress(rt);
    const chain = defineChain({
      id: 1001,
      name: "chaingate devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [rt.url] } },
    });
    const wallet = createWalletClient({ account: address, chain, transport: http(rt.url) });
    const client = createPublicClient({ chain, transport: http(rt.url) });
    expect(await wallet.getAddresses()).toContain(address);
    const hash = await wallet.sendTransaction({ to: DEV_ACCOUNT_2, value: parseEther("0.001") });
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 120_000 });
    expect(receipt.status).toBe("success");
    expect(receipt.from.toLowerCase()).toBe(address.toLowerCase());
    const signature = await wallet.signMessage({ message: "chaingate signs for viem" });
    expect(await client.verifyMessage({ address, message: "chaingate signs for viem", signature })).toBe(
      true,
    );
  });

  it("web3.js eth.sendTransaction from a custody address (unlocked with eth.personal) is mined", async () => {
    const address = await lockedAddress(rt);
    const web3 = new Web3(rt.url);
    expect(await web3.eth.personal.unlockAccount(address, PASSWORD, 600)).toBe(true);
    expect((await web3.eth.getAccounts()).map((a) => a.toLowerCase())).toContain(address.toLowerCase());
    const receipt = await web3.eth.sendTransaction({ from: address, to: DEV_ACCOUNT_2, value: 1000n });
    expect(receipt.status).toBe(1n);
    expect(String(receipt.from).toLowerCase()).toBe(address.toLowerCase());
  });

  it("web3.js personal.sign(data, address, password) on a locked address recovers to it; a wrong password is WRONG_PASSWORD and leaves it locked", async () => {
    const address = await lockedAddress(rt);
    const web3 = new Web3(rt.url);
    const signature = await web3.eth.personal.sign("hello from web3.js", address, PASSWORD);
    expect(verifyMessage("hello from web3.js", signature).toLowerCase()).toBe(address.toLowerCase());
    const wrong = await rt.post("/", {
      jsonrpc: "2.0",
      id: 1,
      method: "personal_sign",
      params: ["0x01", address, "not the password"],
    });
    expect(wrong.json).toMatchObject({ error: { data: { code: "WRONG_PASSWORD" } } });
    // The password was for that one signature: without it the address is still locked.
    const after = await rt.post("/", {
      jsonrpc: "2.0",
      id: 2,
      method: "personal_sign",
      params: ["0x01", address],
    });
    expect(after.json).toMatchObject({ error: { data: { code: "ACCOUNT_LOCKED" } } });
  });

  it("cast send --unlocked --from a custody address is mined", async () => {
    const address = await custodyAddress(rt);
    const out = await cast([
      "send",
      "--unlocked",
      "--from",
      address,
      "--rpc-url",
      rt.url,
      "--json",
      DEV_ACCOUNT_2,
      "--value",
      "1000",
    ]);
    const receipt = JSON.parse(out) as { status: string; from: string; transactionHash: string };
    expect(receipt.status).toBe("0x1");
    expect(receipt.from.toLowerCase()).toBe(address.toLowerCase());
    // Sent through the pipeline: recorded like any POST /transaction.
    const row = await rt.store.db
      .selectFrom("transactions")
      .select(["state", "from_address"])
      .where("tx_hash", "=", receipt.transactionHash)
      .executeTakeFirst();
    expect(row?.from_address).toBe(address);
  });
});
