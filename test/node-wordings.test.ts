import { ethers, Wallet } from "ethers";
import { type Hex, parseEther, toHex } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { devSend, native, nodeCall, receiptOf } from "../src/test-support/chain-helpers.js";
import { DEV_ACCOUNT_2, reasonReverterInitCode } from "../src/test-support/evm-fixtures.js";
import { ownNodes } from "../src/test-support/own-nodes.js";
import { startRpcProxy } from "../src/test-support/rpc-proxy.js";
import type { TestRuntime } from "../src/test-support/test-runtime.js";
import { PASSWORD } from "../src/test-support/token-helpers.js";

/**
 * anvil behind a proxy that words its refusals and reverts as geth, reth, Nethermind, Erigon or Besu
 * would (their sources' wordings and codes): chaingate must act the same whoever words them.
 */
type Implementation = "geth" | "reth" | "Nethermind" | "Erigon" | "Besu";
const WORDINGS: Record<
  Implementation,
  {
    nonceTooLow: (tx: number, state: number) => { code: number; message: string };
    insufficientFunds: { code: number; message: string };
    revert: (data: Hex) => { code: number; message: string; data: unknown };
  }
> = {
  geth: {
    nonceTooLow: (tx, state) => ({
      code: -32000,
      message: `nonce too low: address 0x00, tx: ${tx} state: ${state}`,
    }),
    insufficientFunds: {
      code: -32000,
      message: "insufficient funds for gas * price + value: address 0x00 have 0 want 1",
    },
    revert: (data) => ({ code: 3, message: "execution reverted", data }),
  },
  reth: {
    nonceTooLow: (tx, state) => ({
      code: -32003,
      message: `nonce too low: next nonce ${state}, tx nonce ${tx}`,
    }),
    insufficientFunds: { code: -32003, message: "insufficient funds for gas * price + value: have 0 want 1" },
    revert: (data) => ({ code: 3, message: "execution reverted", data }),
  },
  Nethermind: {
    nonceTooLow: (tx, state) => ({
      code: -32010,
      message: `OldNonce, Current nonce: ${state}, nonce of rejected tx: ${tx}`,
    }),
    insufficientFunds: { code: -32010, message: "InsufficientFunds, Account balance: 0, cumulative cost: 1" },
    revert: (data) => ({ code: -32015, message: "VM execution error.", data: `Reverted ${data}` }),
  },
  Erigon: {
    nonceTooLow: () => ({ code: -32000, message: "nonce too low" }),
    insufficientFunds: { code: -32000, message: "insufficient funds for gas * price + value" },
    revert: (data) => ({ code: 3, message: "execution reverted", data }),
  },
  Besu: {
    nonceTooLow: () => ({ code: -32001, message: "Nonce too low" }),
    // Besu answers this one with -32004, which EIP-1474 gives to "method not supported": words win over that code.
    insufficientFunds: { code: -32004, message: "Upfront cost exceeds account balance" },
    revert: (data) => ({ code: -32000, message: "Execution reverted", data }),
  },
};

const own = ownNodes("node-wordings");
let speaking: Implementation = "geth";
/** Besu's -32005 answers to a request too large: given instead of forwarding, by method. */
const besuLimits = new Map<string, string>();
let rt: TestRuntime;
let anvilUrl: string;

beforeAll(async () => {
  const anvil = await own.anvil("a");
  anvilUrl = anvil.url;
  const intercept = (
    method: string | undefined,
    id: unknown,
    response: import("node:http").ServerResponse,
  ) => {
    const message = method === undefined ? undefined : besuLimits.get(method);
    if (message === undefined) return false;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32005, message } }));
    return true;
  };
  const proxy = await startRpcProxy(anvil.url, intercept, (call, answer) => {
    const error = answer.error as { code: number; message: string; data?: unknown } | undefined;
    if (error === undefined) return answer;
    const words = WORDINGS[speaking];
    const low = /nonce too low/i.exec(error.message);
    if (low && call.method === "eth_sendRawTransaction") return { error: words.nonceTooLow(0, 1) };
    if (/insufficient funds/i.test(error.message)) return { error: words.insufficientFunds };
    if (error.code === 3 && typeof error.data === "string") return { error: words.revert(error.data as Hex) };
    return answer;
  });
  rt = await own.runtime({
    env: { CHAINGATE_UPSTREAMS: proxy.url, CHAINGATE_TRACKER_INTERVAL_MS: "100" },
  });
}, 120_000);

async function wallet(): Promise<{ id: string; address: Hex; keystore: string }> {
  const { json } = await rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
  const [record] = json as { id: string; address: Hex; data: string }[];
  await nodeCall(anvilUrl, "anvil_setBalance", [record!.address, toHex(parseEther("10"))]);
  return { id: record!.id, address: record!.address, keystore: record!.data };
}
const send = (w: { id: string }, value: string) =>
  rt.post("/transaction", { wallet_id: w.id, password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value } });

describe.each(Object.keys(WORDINGS) as Implementation[])(
  "a node that words its answers as %s",
  (implementation) => {
    beforeAll(() => {
      speaking = implementation;
    });

    it("a custody key used outside chaingate: the next sends succeed and are mined", async () => {
      const w = await wallet();
      const first = await send(w, "1");
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      await receiptOf(rt, (first.json as { tx_hash: string }).tx_hash);
      const outside = new Wallet(
        (await Wallet.fromEncryptedJson(w.keystore, PASSWORD)).privateKey,
        new ethers.JsonRpcProvider(anvilUrl, 1001, { staticNetwork: true }),
      );
      for (let i = 1; i <= 2; i++)
        await (await outside.sendTransaction({ to: DEV_ACCOUNT_2, value: 1n, nonce: i })).wait();
      for (let i = 0; i < 2; i++) {
        const next = await send(w, "1");
        expect(next.status, `${implementation}: ${JSON.stringify(next.json)}`).toBe(200);
        expect((await receiptOf(rt, (next.json as { tx_hash: string }).tx_hash)).status).toBe("0x1");
      }
    });

    it("insufficient funds is INSUFFICIENT_FUNDS, and the nonce is given back", async () => {
      const w = await wallet();
      const refused = await send(w, parseEther("10").toString());
      expect(refused.status, JSON.stringify(refused.json)).toBe(422);
      expect(refused.json).toMatchObject({ code: "INSUFFICIENT_FUNDS" });
      const next = await send(w, "1");
      expect(next.status, JSON.stringify(next.json)).toBe(200);
    });

    it("a revert is answered in the standard's shape", async () => {
      const reverter = (
        await receiptOf(rt, await devSend(rt, { data: reasonReverterInitCode("nope") }, "", anvilUrl))
      ).contractAddress!;
      const call = await native(rt, "eth_call", [{ to: reverter }, "latest"]);
      expect(call.error).toMatchObject({ code: 3, message: "execution reverted: nope" });
      expect(String(call.error?.data)).toMatch(/^0x08c379a0/);
    });
  },
);

describe("Besu's -32005 for a request too large: the caller's error, the node stays in rotation", () => {
  const faults = () => rt.chains.home.pool.stats()[0]!.faults;

  it("a send over the block gas limit is refused at once (not resent, not 503), and the nonce is given back", async () => {
    const w = await wallet();
    const before = faults();
    besuLimits.set("eth_sendRawTransaction", "Transaction gas limit exceeds block gas limit");
    const refused = await send(w, "1").finally(() => besuLimits.delete("eth_sendRawTransaction"));
    expect(refused.status, JSON.stringify(refused.json)).toBe(422);
    expect(refused.json).toMatchObject({
      code: "TRANSACTION_REJECTED",
      errors: { node_code: -32005, node_message: "Transaction gas limit exceeds block gas limit" },
    });
    expect(faults()).toBe(before);
    const next = await send(w, "1");
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    const mined = await receiptOf(rt, (next.json as { tx_hash: string }).tx_hash);
    expect(mined.status).toBe("0x1");
    expect(await nodeCall(anvilUrl, "eth_getTransactionCount", [w.address, "latest"])).toBe("0x1");
  });

  it("an eth_getLogs range over the node's maximum answers its -32005 to the client, and is no fault of the node", async () => {
    const before = faults();
    besuLimits.set("eth_getLogs", "Requested range exceeds maximum RPC range limit");
    const answer = await native(rt, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]).finally(() =>
      besuLimits.delete("eth_getLogs"),
    );
    expect(answer.error).toMatchObject({
      code: -32005,
      message: "Requested range exceeds maximum RPC range limit",
    });
    expect(faults()).toBe(before);
    expect(rt.chains.home.pool.stats()[0]!.cooling).toBe(false);
  });
});
