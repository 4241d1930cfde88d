import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ethers, Wallet } from "ethers";
import {
  type Abi,
  createPublicClient,
  encodeFunctionData,
  type Hex,
  keccak256,
  parseAbi,
  parseEther,
  toHex,
  webSocket,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyStore } from "../src/auth/api-keys.js";
import { BridgeERC20 } from "../src/contracts/artifacts.generated.js";
import { CREATE2_DEPLOYER } from "../src/contracts/create2-factory.js";
import { METHODS } from "../src/rpc/method-table.js";
import {
  devSend,
  devTransferAt,
  type Envelope,
  native,
  nodeCall,
  receiptOf,
  result,
} from "../src/test-support/chain-helpers.js";
import {
  DEV_ACCOUNT,
  DEV_ACCOUNT_2,
  DEV_PRIVATE_KEY,
  EMITTER_INIT_CODE,
  EMITTER_TOPIC,
  reasonReverterInitCode,
} from "../src/test-support/evm-fixtures.js";
import { type OtherNode, startGanache, startHardhat } from "../src/test-support/other-nodes.js";
import { specCalls } from "../src/test-support/spec-calls.js";
import { startTestRuntime, type TestRuntime } from "../src/test-support/test-runtime.js";
import { ok, op, PASSWORD, read, settled, waitFor } from "../src/test-support/token-helpers.js";

/**
 * The same scenarios against Hardhat's node (EDR) and Ganache, as an operator fronting them would
 * meet them: chaingate started on two fresh chains with nothing predeployed.
 */
const HARDHAT = 31337;
const GANACHE = 1337;
const dir = mkdtempSync(join(tmpdir(), "chaingate-node-compat-"));
let hardhat: OtherNode;
let ganache: OtherNode;
let rt: TestRuntime;
let keyed: TestRuntime;
let admin: string;
const q = (chainId: number) => `?chain_id=${chainId}`;
const nodeOf = (chainId: number) => (chainId === HARDHAT ? hardhat : ganache);

beforeAll(async () => {
  [hardhat, ganache] = await Promise.all([
    startHardhat(join(dir, "hardhat"), HARDHAT),
    startGanache(GANACHE),
  ]);
  const config = join(dir, "chaingate.json");
  writeFileSync(
    config,
    JSON.stringify({
      homeChainId: HARDHAT,
      chains: [
        { chainId: HARDHAT, name: "hardhat", upstreams: [{ url: hardhat.url }] },
        { chainId: GANACHE, name: "ganache", upstreams: [{ url: ganache.url }] },
      ],
    }),
  );
  rt = await startTestRuntime({
    deploy: true,
    env: {
      CHAINGATE_CONFIG: config,
      CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY,
      CHAINGATE_TRACKER_INTERVAL_MS: "100",
      CHAINGATE_RELAYER_INTERVAL_MS: "100",
      // Ganache never answers a transaction with a nonce gap: the test does not wait the default 10 s.
      CHAINGATE_UPSTREAM_TIMEOUT_MS: "3000",
    },
  });
  // A second chaingate on the same nodes, with an admin key: signing policies are an admin's.
  keyed = await startTestRuntime({
    env: { CHAINGATE_CONFIG: config, CHAINGATE_UPSTREAM_TIMEOUT_MS: "3000" },
  });
  admin = (await new ApiKeyStore(keyed.store).create("admin", "ops")).key;
}, 180_000);

afterAll(async () => {
  await keyed?.close();
  await rt?.close();
  await Promise.all([hardhat?.stop(), ganache?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** A custody wallet funded on both chains from the dev account (10 ETH each). */
async function fundedWallet(): Promise<{ id: string; address: Hex; keystore: string }> {
  const { json } = await rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
  const [record] = json as { id: string; address: Hex; data: string }[];
  for (const chainId of [HARDHAT, GANACHE])
    await receiptOf(
      rt,
      await devSend(
        rt,
        { to: record!.address, value: toHex(parseEther("10")) },
        q(chainId),
        nodeOf(chainId).url,
      ),
      q(chainId),
    );
  return { id: record!.id, address: record!.address, keystore: record!.data };
}

const send = (wallet: { id: string }, chainId: number, transaction: Record<string, unknown>) =>
  rt.post("/transaction", { wallet_id: wallet.id, password: PASSWORD, chain_id: chainId, transaction });

describe.each([
  ["Hardhat", HARDHAT],
  ["Ganache", GANACHE],
])("in front of %s", (name, chainId) => {
  it("chaingate's contracts were deployed on the fresh chain, through the CREATE2 factory it deployed first", async () => {
    expect(rt.system).toBeDefined();
    const code = (address: string) => result<string>(rt, "eth_getCode", [address, "latest"], q(chainId));
    expect(await code(CREATE2_DEPLOYER)).not.toBe("0x");
    expect(await code(rt.system!.endpoint)).not.toBe("0x");
  });

  it("after its custody key sent transactions outside chaingate, the next 3 sends succeed and are mined", async () => {
    const wallet = await fundedWallet();
    const first = await send(wallet, chainId, { to: DEV_ACCOUNT_2, value: "1" });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    await receiptOf(rt, (first.json as { tx_hash: string }).tx_hash, q(chainId));
    // A second system (a rescue script) uses the same key, straight to the node: nonces 1 and 2.
    const outside = new Wallet(
      (await Wallet.fromEncryptedJson(wallet.keystore, PASSWORD)).privateKey,
      new ethers.JsonRpcProvider(nodeOf(chainId).url, chainId, { staticNetwork: true }),
    );
    const used = Number(
      await nodeCall(nodeOf(chainId).url, "eth_getTransactionCount", [wallet.address, "latest"]),
    );
    for (let i = 0; i < 2; i++)
      await (await outside.sendTransaction({ to: DEV_ACCOUNT_2, value: 1n, nonce: used + i })).wait();
    for (let i = 0; i < 3; i++) {
      const next = await send(wallet, chainId, { to: DEV_ACCOUNT_2, value: "1" });
      expect(next.status, `${name} send ${i}: ${JSON.stringify(next.json)}`).toBe(200);
      const receipt = await receiptOf(rt, (next.json as { tx_hash: string }).tx_hash, q(chainId));
      expect(receipt.status).toBe("0x1");
    }
  });

  it("a revert whose reason reads like a fault is answered as a revert, and the node keeps serving", async () => {
    const reverter = (
      await receiptOf(
        rt,
        await devSend(
          rt,
          { data: reasonReverterInitCode("rate limit exceeded, timeout") },
          q(chainId),
          nodeOf(chainId).url,
        ),
        q(chainId),
      )
    ).contractAddress!;
    for (let i = 0; i < 3; i++) {
      const call = await native(rt, "eth_call", [{ to: reverter, data: "0x" }, "latest"], q(chainId));
      expect(call.error?.code).toBe(3);
      expect(call.error?.message).toBe("execution reverted: rate limit exceeded, timeout");
      expect(String(call.error?.data)).toMatch(/^0x08c379a0/);
    }
    // Through ethers, as an application would see it: a CALL_EXCEPTION with the reason.
    const provider = new ethers.JsonRpcProvider(`${rt.url}/${q(chainId)}`, chainId, { staticNetwork: true });
    await expect(provider.call({ to: reverter })).rejects.toMatchObject({
      code: "CALL_EXCEPTION",
      reason: "rate limit exceeded, timeout",
    });
    const pool = rt.chains.get(chainId)!.pool.stats()[0]!;
    expect(pool.cooling).toBe(false);
    expect(await result<string>(rt, "eth_blockNumber", [], q(chainId))).toMatch(/^0x/);
  });

  it("EIP-7702 only where the node has Prague: elsewhere refused before anything is signed or reserved, and the address is not stranded", async () => {
    const wallet = await fundedWallet();
    const prague = name === "Hardhat";
    const nonceBefore = await nodeCall(nodeOf(chainId).url, "eth_getTransactionCount", [
      wallet.address,
      "pending",
    ]);
    const typed = await send(wallet, chainId, {
      to: wallet.address,
      authorizations: [{ delegate: DEV_ACCOUNT_2 }],
    });
    if (prague) {
      expect(typed.status, JSON.stringify(typed.json)).toBe(200);
      await receiptOf(rt, (typed.json as { tx_hash: string }).tx_hash, q(chainId));
    } else {
      // Ganache (Shanghai) would answer "invalid RLP" and leave nonce + 1 reserved for ever.
      expect(typed.status, JSON.stringify(typed.json)).toBe(422);
      expect(typed.json).toMatchObject({ code: "CHAIN_LACKS_FEATURE" });
      expect(String((typed.json as { detail: string }).detail)).toContain(`chain ${chainId}`);
      expect(
        await nodeCall(nodeOf(chainId).url, "eth_getTransactionCount", [wallet.address, "pending"]),
      ).toBe(nonceBefore);
      const unlocked = (
        await rt.post(`/${q(chainId)}`, {
          jsonrpc: "2.0",
          id: 1,
          method: "personal_unlockAccount",
          params: [wallet.address, PASSWORD, 60],
        })
      ).json as Envelope;
      expect(unlocked.result).toBe(true);
      const signed = (
        await rt.post(`/${q(chainId)}`, {
          jsonrpc: "2.0",
          id: 2,
          method: "eth_signAuthorization",
          params: [wallet.address, { address: DEV_ACCOUNT_2 }],
        })
      ).json as Envelope;
      expect(signed.error?.data, JSON.stringify(signed.error)).toMatchObject({ code: "CHAIN_LACKS_FEATURE" });
    }
    // Either way the address's next plain sends are mined at once (no reserved nonce left behind).
    for (let i = 0; i < 2; i++) {
      const next = await send(wallet, chainId, { to: DEV_ACCOUNT_2, value: "1" });
      expect(next.status, JSON.stringify(next.json)).toBe(200);
      expect((await receiptOf(rt, (next.json as { tx_hash: string }).tx_hash, q(chainId))).status).toBe(
        "0x1",
      );
    }
  });

  it("a method the node lacks answers -32601 naming the chain, whatever code the node gave it", async () => {
    const call = [{ blockStateCalls: [{ calls: [] }] }, "latest"];
    const own = await fetch(nodeOf(chainId).url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_simulateV1", params: call }),
    }).then((r) => r.json() as Promise<{ error?: { code: number } }>);
    // Ganache answers -32700 (a parse error to a client), Hardhat -32004: neither is -32601.
    expect(own.error?.code).toBeDefined();
    const answer = await native(rt, "eth_simulateV1", call, q(chainId));
    expect(answer.error).toMatchObject({ code: -32601, data: { code: "METHOD_NOT_SERVED" } });
    expect(answer.error?.message).toContain(`eth_simulateV1 is not served by the nodes of chain ${chainId}`);
  });

  it("eth_getStorageValues and eth_baseFee, which the node lacks, are made from its eth_getStorageAt and eth_feeHistory", async () => {
    const node = nodeOf(chainId).url;
    const endpoint = rt.system!.endpoint;
    const slots = ["0x0", "0x1", "0x2"];
    const values = await result<Record<string, string[]>>(
      rt,
      "eth_getStorageValues",
      [{ [endpoint]: slots }, "latest"],
      q(chainId),
    );
    const own = await Promise.all(
      slots.map((slot) => nodeCall(node, "eth_getStorageAt", [endpoint, slot, "latest"]) as Promise<string>),
    );
    expect(values[endpoint]).toEqual(own.map((v) => `0x${v.slice(2).padStart(64, "0")}`));
    for (const value of values[endpoint]!) expect(value).toMatch(/^0x[0-9a-f]{64}$/);
    // The next block's base fee is the last entry of the node's fee history, read at the same head.
    for (let attempt = 0; ; attempt++) {
      const before = await nodeCall(node, "eth_blockNumber", []);
      const baseFee = await result<string>(rt, "eth_baseFee", [], q(chainId));
      const history = (await nodeCall(node, "eth_feeHistory", ["0x1", "latest", []])) as {
        baseFeePerGas: string[];
      };
      if (before !== (await nodeCall(node, "eth_blockNumber", [])) && attempt < 3) continue;
      expect(baseFee).toBe(history.baseFeePerGas.at(-1));
      break;
    }
  });

  it("eth_sendRawTransactionSync answers the mined receipt though the node has no such method", async () => {
    const nonce = Number(
      await nodeCall(nodeOf(chainId).url, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]),
    );
    const raw = await devTransferAt(chainId, nonce);
    // The node itself does not serve it (asked with bytes it cannot take, so nothing is sent).
    const direct = await fetch(nodeOf(chainId).url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendRawTransactionSync", params: ["0x00"] }),
    }).then((r) => r.json() as Promise<Envelope>);
    expect(direct.error?.message ?? "").toMatch(/not (supported|found|exist|available)|unknown|unsupported/i);
    const answer = await native(rt, "eth_sendRawTransactionSync", [raw, 20_000], q(chainId));
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    const receipt = answer.result as { status: string; transactionHash: string; blockHash: string };
    expect(receipt.status).toBe("0x1");
    expect(receipt.transactionHash).toBe(keccak256(raw));
    expect((await receiptOf(rt, keccak256(raw), q(chainId))).blockHash).toBe(receipt.blockHash);
  });

  it("the simulation rule reads this node's answers: a revert is refused before signing, a transfer passes", async () => {
    const auth = { authorization: `Bearer ${admin}` };
    const call = async (method: string, params: unknown[]) =>
      (await keyed.post(`/${q(chainId)}`, { jsonrpc: "2.0", id: 1, method, params }, auth)).json as Envelope;
    const made = await keyed.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
      auth,
    );
    const [wallet] = made.json as { id: string; address: Hex }[];
    await receiptOf(
      rt,
      await devSend(
        rt,
        { to: wallet!.address, value: toHex(parseEther("1")) },
        q(chainId),
        nodeOf(chainId).url,
      ),
      q(chainId),
    );
    const reverter = (
      await receiptOf(
        rt,
        await devSend(rt, { data: reasonReverterInitCode("not today") }, q(chainId), nodeOf(chainId).url),
        q(chainId),
      )
    ).contractAddress!;
    const policy = await keyed.post(
      "/policies",
      { name: "simulated", wallet_id: wallet!.id, rules: { simulation: {} } },
      auth,
    );
    expect(policy.status, JSON.stringify(policy.json)).toBe(200);
    expect((await call("personal_unlockAccount", [wallet!.address, PASSWORD, 600])).result).toBe(true);
    const refused = await call("eth_sendTransaction", [
      { from: wallet!.address, to: reverter, gas: "0x30000" },
    ]);
    const data = refused.error?.data as {
      code?: string;
      rule?: string;
      simulated_with?: string;
      revert_data?: string;
    };
    expect(data, JSON.stringify(refused.error)).toMatchObject({
      code: "POLICY_DENIED",
      rule: "simulation.refuse_reverts",
    });
    // Whichever the node offers: eth_simulateV1, or eth_call where it has none; the revert's data either way.
    expect(["eth_simulateV1", "eth_call"]).toContain(data.simulated_with);
    expect(String(data.revert_data)).toMatch(/^0x08c379a0/);
    expect(await nodeCall(nodeOf(chainId).url, "eth_getTransactionCount", [wallet!.address, "pending"])).toBe(
      "0x0",
    );
    const passed = await call("eth_sendTransaction", [
      { from: wallet!.address, to: DEV_ACCOUNT_2, value: "0x1" },
    ]);
    expect(passed.error, JSON.stringify(passed.error)).toBeUndefined();
    expect((await receiptOf(rt, passed.result as string, q(chainId))).status).toBe("0x1");

    // No eth_simulateV1 here: an outflow cap cannot be judged from logs, so it fails closed...
    const capped = await keyed.post(
      "/policies",
      {
        name: "capped",
        wallet_id: wallet!.id,
        rules: { simulation: { max_token_outflow: [{ max: "10" }] } },
      },
      auth,
    );
    expect(capped.status, JSON.stringify(capped.json)).toBe(200);
    const closed = await call("eth_sendTransaction", [
      { from: wallet!.address, to: DEV_ACCOUNT_2, value: "0x1" },
    ]);
    expect(closed.error?.data, JSON.stringify(closed.error)).toMatchObject({
      code: "POLICY_DENIED",
      rule: "simulation.max_token_outflow",
      simulated_with: "eth_call",
    });
    expect(closed.error?.message).toContain("cannot simulate with logs");
    // ...unless the operator chose calldata-only judging: then a grant over the cap is still refused.
    const deleted = await fetch(`${keyed.url}/policies/${(capped.json as { id: string }).id}`, {
      method: "DELETE",
      headers: auth,
    });
    expect(deleted.status).toBeLessThan(300);
    const calldata = await keyed.post(
      "/policies",
      {
        name: "calldata",
        wallet_id: wallet!.id,
        rules: { simulation: { calldata_only: true, max_token_outflow: [{ max: "10" }] } },
      },
      auth,
    );
    expect(calldata.status, JSON.stringify(calldata.json)).toBe(200);
    const plain = await call("eth_sendTransaction", [
      { from: wallet!.address, to: DEV_ACCOUNT_2, value: "0x1" },
    ]);
    expect(plain.error, JSON.stringify(plain.error)).toBeUndefined();
    const approve = encodeFunctionData({
      abi: parseAbi(["function approve(address spender, uint256 amount)"]),
      functionName: "approve",
      args: [DEV_ACCOUNT_2, 1000n],
    });
    // Sent to an account without code (the call cannot revert): what counts is what the calldata grants.
    const granted = await call("eth_sendTransaction", [
      { from: wallet!.address, to: DEV_ACCOUNT_2, data: approve, gas: "0x30000" },
    ]);
    expect(granted.error?.data, JSON.stringify(granted.error)).toMatchObject({
      rule: "simulation.max_token_outflow",
      outflow: "1000",
    });
  });

  it("a raw transaction with a nonce gap does not take the node out of rotation", async () => {
    const nonce = Number(
      await nodeCall(nodeOf(chainId).url, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]),
    );
    const gapped = await devTransferAt(chainId, nonce + 5);
    // Hardhat refuses it ("Nonce too high"); Ganache never answers, yet holds it queued: asked by
    // hash after the timeout, it has it, and that is the answer (the hash).
    const sent = await native(rt, "eth_sendRawTransaction", [gapped], q(chainId));
    if (name === "Hardhat") expect(sent.error?.message).toMatch(/Nonce too high/);
    else expect(sent.result).toBe(keccak256(gapped));
    const pool = rt.chains.get(chainId)!.pool.stats()[0]!;
    expect(pool.cooling).toBe(false);
    expect(await result<string>(rt, "eth_chainId", [], q(chainId))).toBe(toHex(chainId));
    expect(await result<string>(rt, "eth_getBalance", [DEV_ACCOUNT, "latest"], q(chainId))).toMatch(/^0x/);
  });

  it("insufficient funds reported by the node is INSUFFICIENT_FUNDS, however the node words it", async () => {
    const wallet = await fundedWallet();
    const balance = BigInt(
      await result<string>(rt, "eth_getBalance", [wallet.address, "latest"], q(chainId)),
    );
    // The whole balance as value: chaingate's own check passes (value <= balance); only the node sees that gas cannot be paid.
    const refused = await send(wallet, chainId, { to: DEV_ACCOUNT_2, value: balance.toString() });
    expect(refused.status, JSON.stringify(refused.json)).toBe(422);
    expect(refused.json).toMatchObject({ code: "INSUFFICIENT_FUNDS" });
    // The nonce was given back: the next send goes through.
    const next = await send(wallet, chainId, { to: DEV_ACCOUNT_2, value: "1" });
    expect(next.status, JSON.stringify(next.json)).toBe(200);
  });

  it("newHeads and logs subscriptions (viem over the WebSocket) see its blocks and logs", async () => {
    const client = createPublicClient({
      transport: webSocket(`${rt.url.replace("http", "ws")}/?chain_id=${chainId}`),
    });
    const emitter = (
      await receiptOf(
        rt,
        await devSend(rt, { data: EMITTER_INIT_CODE }, q(chainId), nodeOf(chainId).url),
        q(chainId),
      )
    ).contractAddress! as Hex;
    const heads: bigint[] = [];
    const logs: string[] = [];
    const unwatchBlocks = client.watchBlockNumber({
      onBlockNumber: (n) => heads.push(n),
      emitOnBegin: false,
    });
    const unwatchLogs = client.watchEvent({
      address: emitter,
      onLogs: (found) => logs.push(...found.map((l) => l.transactionHash!)),
    });
    try {
      await new Promise((r) => setTimeout(r, 500));
      const emitted = await receiptOf(
        rt,
        await devSend(rt, { to: emitter }, q(chainId), nodeOf(chainId).url),
        q(chainId),
      );
      await waitFor("the block and the log", async () =>
        heads.includes(BigInt(emitted.blockNumber)) && logs.includes(emitted.transactionHash)
          ? true
          : undefined,
      );
    } finally {
      unwatchBlocks();
      unwatchLogs();
      await (await client.transport.getRpcClient()).close();
    }
  });

  it("create_new_ERC20_token works (the contracts run on its EVM)", async () => {
    const wallet = await fundedWallet();
    const token = await ok(rt, "create_new_ERC20_token", {
      wallet_id: wallet.id,
      password: PASSWORD,
      chain_id: chainId,
      name: `${name} Coin`,
      symbol: "CMP",
      initial_supply: "1000",
    });
    expect((await receiptOf(rt, token.tx_hash as string, q(chainId))).status).toBe("0x1");
    expect(
      await read(rt, chainId, token.address as string, BridgeERC20.abi as Abi, "balanceOf", [wallet.address]),
    ).toBe(1000n);
  });
});

it("eth_fillTransaction with a custody-signed authorization in front of Hardhat: the gas is the node's estimate with it, and the signed transaction is mined", async () => {
  // Hardhat (EDR, Prague) runs EIP-7702; Ganache has no type 4, so the case is Hardhat's alone.
  const { address } = await fundedWallet();
  expect((await native(rt, "personal_unlockAccount", [address, PASSWORD, 600], q(HARDHAT))).result).toBe(
    true,
  );
  const nonce = Number(await nodeCall(hardhat.url, "eth_getTransactionCount", [address, "pending"]));
  // The sender's own authorization must carry the nonce after its transaction's.
  const authorization = await result(
    rt,
    "eth_signAuthorization",
    [address, { address: DEV_ACCOUNT_2, nonce: toHex(nonce + 1) }],
    q(HARDHAT),
  );
  const tx = { from: address, to: address, authorizationList: [authorization] };
  const filled = await result<{ tx: { type: string; gas: string; nonce: string } }>(
    rt,
    "eth_fillTransaction",
    [tx],
    q(HARDHAT),
  );
  expect(filled.tx.type).toBe("0x4");
  expect(Number(filled.tx.nonce)).toBe(nonce);
  const estimate = BigInt(
    (await nodeCall(hardhat.url, "eth_estimateGas", [
      { from: address, to: address, authorizationList: [authorization] },
      "pending",
    ])) as string,
  );
  expect(estimate).toBeGreaterThan(21_000n);
  expect(BigInt(filled.tx.gas)).toBeGreaterThanOrEqual(estimate);
  const hash = await result<string>(rt, "eth_sendTransaction", [{ ...tx, gas: filled.tx.gas }], q(HARDHAT));
  expect((await receiptOf(rt, hash, q(HARDHAT))).status).toBe("0x1");
  expect(await nodeCall(hardhat.url, "eth_getCode", [address, "latest"])).toBe(
    `0xef0100${DEV_ACCOUNT_2.slice(2).toLowerCase()}`,
  );
});

it("a transport from Hardhat to Ganache is delivered", async () => {
  const wallet = await fundedWallet();
  await ok(rt, "register_new_member", { name: "Ganache Bank", chain_id: GANACHE, role: "PARTICIPANT" });
  const token = await ok(rt, "create_new_ERC20_token", {
    wallet_id: wallet.id,
    password: PASSWORD,
    chain_id: HARDHAT,
    name: "Bridge Coin",
    symbol: "BRG",
    initial_supply: "1000",
  });
  await receiptOf(rt, token.tx_hash as string, q(HARDHAT));
  const sent = await ok(rt, "trasport_token", {
    wallet_id: wallet.id,
    password: PASSWORD,
    chain_id: HARDHAT,
    token: token.address,
    to: DEV_ACCOUNT_2,
    amount: "250",
    destination_chain_id: GANACHE,
  });
  expect(await settled(rt, sent.transport_id as string, 60_000)).toMatchObject({ state: "delivered" });
  expect(
    await read(rt, GANACHE, token.address as string, BridgeERC20.abi as Abi, "balanceOf", [DEV_ACCOUNT_2]),
  ).toBe(250n);
  // A receiver is read on Ganache (eth_getCode) before anything is signed: no code, refused.
  const refused = await op(rt, "transport_arbitrary_message", {
    wallet_id: wallet.id,
    password: PASSWORD,
    chain_id: HARDHAT,
    destination_chain_id: GANACHE,
    destination: DEV_ACCOUNT_2,
    payload: "0x01",
  });
  expect(refused.error?.data?.code).toBe("RECEIVER_NOT_CONTRACT");
  // The token now has code on Ganache: a message to it is accepted (and signed on Hardhat).
  const accepted = await op(rt, "transport_arbitrary_message", {
    wallet_id: wallet.id,
    password: PASSWORD,
    chain_id: HARDHAT,
    destination_chain_id: GANACHE,
    destination: token.address,
    payload: "0x01",
  });
  expect(accepted.error).toBeUndefined();
});

it("all 33 spec Native paths answer a result in front of Hardhat, and ethers reads its pending block", async () => {
  const emitter = (
    await receiptOf(rt, await devSend(rt, { data: EMITTER_INIT_CODE }, q(HARDHAT), hardhat.url), q(HARDHAT))
  ).contractAddress!;
  const logFilter = await result<string>(rt, "eth_newFilter", [
    { address: emitter, topics: [EMITTER_TOPIC] },
  ]);
  const emit = await receiptOf(rt, await devSend(rt, { to: emitter }, q(HARDHAT), hardhat.url), q(HARDHAT));
  const filterForUninstall = await result<string>(rt, "eth_newBlockFilter");
  const custody = (await fundedWallet()).address;
  const nonce = Number(await nodeCall(hardhat.url, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]));
  const raw = await devTransferAt(HARDHAT, nonce);
  expect((await native(rt, "personal_unlockAccount", [custody, PASSWORD, 600])).result).toBe(true);
  const { blockNumber } = emit;
  const calls = specCalls({ emitter, logFilter, filterForUninstall, emit, raw, custody });
  const spec = METHODS.filter((m) => m.inSpec).map((m) => m.name);
  expect(Object.keys(calls).sort()).toEqual(spec.sort());
  const answers: Record<string, Envelope> = {};
  for (const method of spec) {
    answers[method] = await native(rt, method, calls[method]);
    expect(answers[method]!.error, `${method}: ${JSON.stringify(answers[method]!.error)}`).toBeUndefined();
    expect("result" in answers[method]!, method).toBe(true);
  }
  // Hardhat serves none of these; each is answered from calls it does serve.
  expect(answers.eth_protocolVersion!.result).toBe("0x44");
  expect(answers.eth_getUncleCountByBlockHash!.result).toBe("0x0");
  expect(answers.eth_getUncleByBlockNumberAndIndex!.result).toBeNull();
  const receipts = await result<{ transactionHash: string }[]>(rt, "eth_getBlockReceipts", [blockNumber]);
  expect(receipts.map((r) => r.transactionHash)).toEqual([emit.transactionHash]);

  const provider = new ethers.JsonRpcProvider(`${rt.url}/`, HARDHAT, { staticNetwork: true });
  const pending = await provider.getBlock("pending");
  expect(pending?.number).toBe(Number(await provider.getBlockNumber()) + 1);
});
