/** Custody trusts no single node: two anvils of one chain, one behind a proxy that lies about simulations, estimates and code; nothing is signed while they disagree. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeFunctionData, type Hex, parseAbi, parseEther, toHex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Envelope, nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { guardedBySimulation } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2, DEV_PRIVATE_KEY } from "../test-support/evm-fixtures.js";
import { adminAndWallet } from "../test-support/keys.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { ok } from "../test-support/token-helpers.js";

const PASSWORD = "quorum-custody-pw";
const ERC20 = parseAbi(["function transfer(address to, uint256 amount) returns (bool)"]);
const transfer = (amount: bigint) =>
  encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [DEV_ACCOUNT_2, amount] });

/** What the lying node says, switched per test. */
type Lie = "none" | "simulation succeeds" | "estimate x5" | "no code";

const own = ownNodes("quorum-custody");

describeEachStore("custody on a chain with two upstreams, one of which lies", (target) => {
  let proxy: RpcProxy;
  let nodeA: string;
  let nodeB: string;
  let rt: TestRuntime;
  let admin: string;
  let wallet: { id: string; address: Hex };
  let token: Hex;
  let lie: Lie = "none";
  const auth = () => ({ authorization: `Bearer ${admin}` });
  const rpc = async (method: string, params: unknown[]) =>
    (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, auth())).json as Envelope;
  const signedRows = async () =>
    (
      await rt.store.db
        .selectFrom("transactions")
        .select("id")
        .where("from_address", "=", wallet.address.toLowerCase())
        .execute()
    ).length;
  const pendingOn = (node: string) => nodeCall(node, "eth_getTransactionCount", [wallet.address, "pending"]);
  const minedOnBoth = (hash: string) =>
    waitUntil(async () => {
      for (const node of [nodeA, nodeB])
        if ((await nodeCall(node, "eth_getTransactionReceipt", [hash])) === null) return false;
      return true;
    }, 30_000);

  /** Sends through custody while `told` is said by node B; answers the refusal and checks nothing was signed. */
  async function refusedWhile(told: Lie, send: () => Promise<Envelope>): Promise<Envelope["error"]> {
    const rows = await signedRows();
    const before = await Promise.all([pendingOn(nodeA), pendingOn(nodeB)]);
    lie = told;
    let answer: Envelope;
    try {
      answer = await send();
    } finally {
      lie = "none";
    }
    expect(answer.result, JSON.stringify(answer)).toBeUndefined();
    expect(await signedRows()).toBe(rows);
    expect(await Promise.all([pendingOn(nodeA), pendingOn(nodeB)])).toEqual(before);
    return answer.error;
  }

  beforeAll(async () => {
    const [a, b] = await Promise.all([own.anvil(`a-${target}`), own.anvil(`b-${target}`)]);
    nodeA = a.url;
    nodeB = b.url;
    proxy = await startRpcProxy(b.url, undefined, (call, answer) => {
      if (lie === "simulation succeeds" && call.method === "eth_simulateV1")
        return {
          result: [{ calls: [{ status: "0x1", logs: [], returnData: "0x", gasUsed: "0x5208" }] }],
        };
      if (lie === "estimate x5" && call.method === "eth_estimateGas" && typeof answer.result === "string")
        return { result: toHex(BigInt(answer.result) * 5n) };
      if (lie === "no code" && call.method === "eth_getCode") return { result: "0x" };
      return answer;
    });
    const config = join(own.dir, `chains-${target}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        chains: [
          {
            chainId: 1001,
            upstreams: [{ url: nodeA }, { url: proxy.url }],
            finality: 1,
            // Lies must be judged, not raced: no second request for a slow read.
            hedge: false,
          },
        ],
      }),
    );
    rt = await startTestRuntime({
      store: target,
      deploy: true,
      env: {
        CHAINGATE_CONFIG: config,
        // The token factory is one of chaingate's system contracts, deployed by the operator key.
        CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY,
        CHAINGATE_TRACKER_INTERVAL_MS: "100",
      },
    });
    ({ admin, wallet } = await adminAndWallet(rt, PASSWORD));
    for (const node of [nodeA, nodeB])
      await nodeCall(node, "anvil_setBalance", [wallet.address, toHex(parseEther("10"))]);
    const created = await ok(
      rt,
      "create_new_ERC20_token",
      {
        wallet_id: wallet.id,
        password: PASSWORD,
        name: "Quorum Coin",
        symbol: "QRM",
        initial_supply: parseEther("1000").toString(),
      },
      auth(),
    );
    expect(await minedOnBoth(created.tx_hash as string)).toBe(true);
    token = created.address as Hex;
    await guardedBySimulation(rt, wallet, token, PASSWORD, auth());
  }, 180_000);
  afterAll(async () => {
    await rt?.close();
    await proxy?.close();
  });

  it("while both nodes agree, a simulated send is signed and reaches both", async () => {
    const sent = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: transfer(parseEther("10")) },
    ]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect(await minedOnBoth(sent.result as string)).toBe(true);
  });

  it("a node that says a reverting call succeeds: nothing is signed, and the refusal names what each said", async () => {
    // More than the wallet holds: the token reverts on the honest node. The gas is given, so the
    // simulation (not the estimate, which both nodes would refuse alike) is what decides.
    const error = await refusedWhile("simulation succeeds", () =>
      rpc("eth_sendTransaction", [
        { from: wallet.address, to: token, data: transfer(parseEther("5000")), gas: "0x30000" },
      ]),
    );
    expect(error?.message).toMatch(/Upstreams disagree: the simulation/);
    const data = error?.data as { code: string; upstreams: { upstream: string; said: string }[] };
    expect(data.code).toBe("UPSTREAMS_DISAGREE");
    expect(data.upstreams).toHaveLength(2);
    expect(data.upstreams.map((u) => u.said).join(" | ")).toMatch(
      /reverts.*\|.*succeeds|succeeds.*\|.*reverts/,
    );
  });

  it("a node that hides a draining transfer's logs: nothing is signed", async () => {
    const error = await refusedWhile("simulation succeeds", () =>
      rpc("eth_sendTransaction", [{ from: wallet.address, to: token, data: transfer(parseEther("500")) }]),
    );
    expect((error?.data as { code?: string } | undefined)?.code).toBe("UPSTREAMS_DISAGREE");
    expect(error?.message).toMatch(
      /succeeds with 1 log\(s\).*succeeds with 0 log\(s\)|0 log\(s\).*1 log\(s\)/,
    );
  });

  it("a node that inflates a gas estimate: nothing is signed, through REST and eth_fillTransaction alike", async () => {
    const viaRest = await refusedWhile("estimate x5", async () => {
      const answer = await rt.post(
        "/transaction",
        { wallet_id: wallet.id, password: PASSWORD, transaction: { to: token, data: transfer(1n) } },
        auth(),
      );
      const problem = answer.json as { code?: string; detail?: string };
      expect(answer.status, JSON.stringify(problem)).toBe(503);
      return { jsonrpc: "2.0", id: 1, error: { code: 0, message: problem.detail ?? "", data: problem } };
    });
    expect((viaRest?.data as { code?: string } | undefined)?.code).toBe("UPSTREAMS_DISAGREE");
    expect(viaRest?.message).toMatch(/the gas estimate/);
    lie = "estimate x5";
    try {
      const filled = await rpc("eth_fillTransaction", [
        { from: wallet.address, to: token, data: transfer(1n) },
      ]);
      expect((filled.error?.data as { code: string } | undefined)?.code, JSON.stringify(filled)).toBe(
        "UPSTREAMS_DISAGREE",
      );
    } finally {
      lie = "none";
    }
  });

  it("a node that says a contract has no code (so a plain transfer looks like 21,000 gas): nothing is signed", async () => {
    const error = await refusedWhile("no code", () =>
      rpc("eth_sendTransaction", [{ from: wallet.address, to: token, value: "0x1" }]),
    );
    expect((error?.data as { code?: string } | undefined)?.code).toBe("UPSTREAMS_DISAGREE");
    expect(error?.message).toMatch(/eth_getCode of .*no code/);
  });

  it("once the node tells the truth again, the same kind of send is signed", async () => {
    const sent = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: transfer(parseEther("1")) },
    ]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect(await minedOnBoth(sent.result as string)).toBe(true);
  });
});
