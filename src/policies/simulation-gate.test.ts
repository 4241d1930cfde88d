import { encodeFunctionData, type Hex, parseAbi, parseEther, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envelope, nodeCall, nodeReceipt, nodeUrlOf } from "../test-support/chain-helpers.js";
import { guardedBySimulation } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2, typedFields } from "../test-support/evm-fixtures.js";
import { adminAndWallet } from "../test-support/keys.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { ok } from "../test-support/token-helpers.js";

const PASSWORD = "simulation-password";
const ERC20 = parseAbi([
  "function transfer(address to, uint256 amount) returns (bool)",
  "function approve(address spender, uint256 amount) returns (bool)",
  "function transferFrom(address from, address to, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
]);
const approve = (amount: bigint) =>
  encodeFunctionData({ abi: ERC20, functionName: "approve", args: [THIEF.address, amount] });
const transfer = (amount: bigint) =>
  encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [DEV_ACCOUNT_2, amount] });
/** Someone the custody address must not let take its tokens. */
const THIEF = privateKeyToAccount(generatePrivateKey());
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

describe("simulation as a policy gate", () => {
  let rt: TestRuntime;
  let admin: string;
  let wallet: { id: string; address: Hex };
  let token: Hex;
  const auth = () => ({ authorization: `Bearer ${admin}` });
  const rpc = async (method: string, params: unknown[]) =>
    (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, auth())).json as Envelope;
  const mined = (hash: unknown) => nodeReceipt(nodeUrlOf(rt), hash);
  const pending = () => nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [wallet.address, "pending"]);

  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });
    ({ admin, wallet } = await adminAndWallet(rt, PASSWORD));
    await nodeCall(nodeUrlOf(rt), "anvil_setBalance", [wallet.address, toHex(10n ** 19n)]);
    const created = await ok(
      rt,
      "create_new_ERC20_token",
      {
        wallet_id: wallet.id,
        password: PASSWORD,
        name: "Gate Coin",
        symbol: "GATE",
        initial_supply: parseEther("1000").toString(),
      },
      auth(),
    );
    await mined(created.tx_hash);
    token = created.address as Hex;
    await guardedBySimulation(rt, wallet, token, PASSWORD, auth());
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  it("eth_simulateV1 passes through to a node that has it", async () => {
    const answer = await rpc("eth_simulateV1", [
      { blockStateCalls: [{ calls: [{ from: wallet.address, to: token, input: transfer(1n) }] }] },
      "latest",
    ]);
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    const [block] = answer.result as { calls: { status: string; logs: { topics: string[] }[] }[] }[];
    expect(block!.calls[0]!.status).toBe("0x1");
    expect(block!.calls[0]!.logs[0]!.topics[0]).toBe(TRANSFER_TOPIC);
  });

  it("a simulated outflow above the limit is refused before signing, with the simulated logs", async () => {
    const before = await pending();
    const refused = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: transfer(parseEther("500")) },
    ]);
    expect(refused.error?.code, JSON.stringify(refused.error)).toBe(-32003);
    const data = refused.error?.data as {
      code: string;
      rule: string;
      simulated_with: string;
      simulated_logs: { address: string; topics: string[]; data: string }[];
      outflow: string;
    };
    expect(data).toMatchObject({
      code: "POLICY_DENIED",
      rule: "simulation.max_token_outflow",
      simulated_with: "eth_simulateV1",
      outflow: parseEther("500").toString(),
    });
    expect(data.simulated_logs).toHaveLength(1);
    expect(data.simulated_logs[0]!.topics[0]).toBe(TRANSFER_TOPIC);
    expect(data.simulated_logs[0]!.address.toLowerCase()).toBe(token.toLowerCase());
    expect(await pending()).toBe(before);
    // Within the limit it is signed, sent and mined.
    const allowed = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: transfer(parseEther("50")) },
    ]);
    expect(allowed.error, JSON.stringify(allowed.error)).toBeUndefined();
    expect((await mined(allowed.result)).status).toBe("0x1");
  });

  it("a call that reverts in simulation is refused with its revert data, and audited", async () => {
    const before = await pending();
    // More than the address holds: the token reverts (ERC20InsufficientBalance).
    const refused = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: transfer(parseEther("5000")), gas: "0x30000" },
    ]);
    expect(refused.error?.data).toMatchObject({ code: "POLICY_DENIED", rule: "simulation.refuse_reverts" });
    expect(String((refused.error?.data as { revert_data?: string } | undefined)?.revert_data)).toMatch(
      /^0xe450d38c/,
    );
    expect(await pending()).toBe(before);
    const res = await fetch(`${rt.url}/audit?limit=1000`, { headers: auth() });
    const entries = ((await res.json()) as { entries: { decision: string; rule: string | null }[] }).entries;
    expect(entries.filter((e) => e.decision === "denied").map((e) => e.rule)).toEqual(
      expect.arrayContaining(["simulation.max_token_outflow", "simulation.refuse_reverts"]),
    );
  });

  it("approve-then-pull: a grant over the cap is refused like a transfer over it, and the thief can pull nothing", async () => {
    const before = await pending();
    const refused = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: approve(parseEther("1000")) },
    ]);
    expect(refused.error?.data, JSON.stringify(refused.error)).toMatchObject({
      code: "POLICY_DENIED",
      rule: "simulation.max_token_outflow",
      simulated_with: "eth_simulateV1",
      outflow: parseEther("1000").toString(),
    });
    expect(await pending()).toBe(before);
    const allowance = () =>
      nodeCall(nodeUrlOf(rt), "eth_call", [
        {
          to: token,
          data: encodeFunctionData({
            abi: ERC20,
            functionName: "allowance",
            args: [wallet.address, THIEF.address],
          }),
        },
        "latest",
      ]);
    expect(BigInt((await allowance()) as string)).toBe(0n);
    // The thief's own transferFrom finds no allowance: it reverts on the node.
    await nodeCall(nodeUrlOf(rt), "anvil_setBalance", [THIEF.address, toHex(10n ** 18n)]);
    const pull = await nodeCall(nodeUrlOf(rt), "eth_estimateGas", [
      {
        from: THIEF.address,
        to: token,
        data: encodeFunctionData({
          abi: ERC20,
          functionName: "transferFrom",
          args: [wallet.address, THIEF.address, parseEther("1000")],
        }),
      },
    ]).then(
      () => "ran",
      (error: Error) => error.message,
    );
    expect(pull).not.toBe("ran");
    // A grant within the cap is signed and mined.
    const small = await rpc("eth_sendTransaction", [
      { from: wallet.address, to: token, data: approve(parseEther("5")) },
    ]);
    expect(small.error, JSON.stringify(small.error)).toBeUndefined();
    expect((await mined(small.result)).status).toBe("0x1");
    expect(BigInt((await allowance()) as string)).toBe(parseEther("5"));
  });

  it("a permit signed as typed data is judged under the same cap (EIP-2612 and Permit2)", async () => {
    const permit = (value: bigint) => ({
      types: {
        EIP712Domain: typedFields("name string, chainId uint256, verifyingContract address"),
        Permit: typedFields("owner address, spender address, value uint256, nonce uint256, deadline uint256"),
      },
      primaryType: "Permit",
      domain: { name: "Gate Coin", chainId: 1001, verifyingContract: token },
      message: {
        owner: wallet.address,
        spender: THIEF.address,
        value: value.toString(),
        nonce: 0,
        deadline: 2 ** 40,
      },
    });
    const refused = await rpc("eth_signTypedData_v4", [
      wallet.address,
      JSON.stringify(permit(parseEther("1000"))),
    ]);
    expect(refused.error?.data, JSON.stringify(refused.error)).toMatchObject({
      code: "POLICY_DENIED",
      rule: "simulation.max_token_outflow",
      outflow: parseEther("1000").toString(),
    });
    const signed = await rpc("eth_signTypedData_v4", [
      wallet.address,
      JSON.stringify(permit(parseEther("5"))),
    ]);
    expect(signed.error, JSON.stringify(signed.error)).toBeUndefined();
    expect(String(signed.result)).toMatch(/^0x[0-9a-f]{130}$/);
    const permit2 = {
      types: {
        EIP712Domain: typedFields("name string, chainId uint256, verifyingContract address"),
        PermitDetails: typedFields("token address, amount uint160, expiration uint48, nonce uint48"),
        PermitSingle: typedFields("details PermitDetails, spender address, sigDeadline uint256"),
      },
      primaryType: "PermitSingle",
      domain: {
        name: "Permit2",
        chainId: 1001,
        verifyingContract: "0x000000000022D473030F116dDEE9F6B43aC78BA3",
      },
      message: {
        details: { token, amount: parseEther("1000").toString(), expiration: 2 ** 40, nonce: 0 },
        spender: THIEF.address,
        sigDeadline: 2 ** 40,
      },
    };
    const viaPermit2 = await rpc("eth_signTypedData_v4", [wallet.address, JSON.stringify(permit2)]);
    expect(viaPermit2.error?.data, JSON.stringify(viaPermit2.error)).toMatchObject({
      rule: "simulation.max_token_outflow",
    });
  });
});
