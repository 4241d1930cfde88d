import fc from "fast-check";
import { encodeFunctionData, type Hex, parseAbi } from "viem";
import { expect, it } from "vitest";
import { decodeCall } from "./decode-call.js";
import {
  checkMessage,
  checkSimulation,
  checkTransaction,
  dailyLimits,
  type TransactionFacts,
} from "./evaluate-policy.js";
import type { Policy, PolicyRules } from "./policy-rules.js";

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((bytes) => `0x${Buffer.from(bytes).toString("hex")}` as Hex);
const amount = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
const ERC20 = parseAbi([
  "function transfer(address to, uint256 amount)",
  "function transferFrom(address from, address to, uint256 amount)",
  "function approve(address spender, uint256 amount)",
]);

const policy = (rules: PolicyRules): Policy => ({
  id: "p1",
  name: "test",
  wallet_id: "w",
  api_key_id: null,
  rules,
  created_by: null,
  created_at: "",
});

const plain = (to: Hex, value: bigint): TransactionFacts => ({
  chainId: 1001,
  to: to.toLowerCase(),
  value,
  gas: 21_000n,
  feePerGas: 1n,
  call: decodeCall(to, "0x", false),
  toEndpoint: false,
});

it("ERC20 calldata decodes to the token, the amount and whoever gets them, for any arguments", () => {
  fc.assert(
    fc.property(address, address, address, amount, (token, from, to, value) => {
      const transfer = decodeCall(
        token,
        encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [to, value] }),
        false,
      );
      expect(transfer.token).toEqual({
        token: token.toLowerCase(),
        amount: value,
        beneficiary: to.toLowerCase(),
        how: "transfer",
      });
      expect(transfer.selector).toBe("0xa9059cbb");
      const pulled = decodeCall(
        token,
        encodeFunctionData({ abi: ERC20, functionName: "transferFrom", args: [from, to, value] }),
        false,
      );
      expect(pulled.token?.beneficiary).toBe(to.toLowerCase());
      const approval = decodeCall(
        token,
        encodeFunctionData({ abi: ERC20, functionName: "approve", args: [to, value] }),
        false,
      );
      expect(approval.token).toMatchObject({ amount: value, how: "approve" });
    }),
  );
});

it("calldata that is not one of the known functions is only its selector, whatever its bytes", () => {
  fc.assert(
    fc.property(address, fc.uint8Array({ minLength: 0, maxLength: 200 }), (to, bytes) => {
      const data = `0x${Buffer.from(bytes).toString("hex")}` as Hex;
      const facts = decodeCall(to, data, false);
      if (bytes.length < 4) expect(facts.selector).toBeNull();
      else expect(facts.selector).toBe(data.slice(0, 10));
      if (facts.token) expect(["0xa9059cbb", "0x23b872dd", "0x095ea7b3"]).toContain(facts.selector);
    }),
  );
});

it("a policy without rules allows every transaction and message", () => {
  fc.assert(
    fc.property(address, amount, (to, value) => {
      expect(checkTransaction([policy({})], plain(to, value))).toBeUndefined();
      expect(dailyLimits([policy({})], plain(to, value))).toEqual([]);
      expect(checkMessage([policy({})], { kind: "message" })).toBeUndefined();
    }),
  );
});

it("max_value_per_tx refuses exactly the values above it", () => {
  fc.assert(
    fc.property(address, amount, amount, (to, value, max) => {
      const denial = checkTransaction([policy({ max_value_per_tx: max.toString() })], plain(to, value));
      expect(denial?.rule).toBe(value > max ? "max_value_per_tx" : undefined);
    }),
  );
});

it("recipients allow exactly the listed addresses, in any letter case, for plain transfers and token transfers", () => {
  fc.assert(
    fc.property(
      fc.array(address, { minLength: 1, maxLength: 5 }),
      address,
      fc.boolean(),
      (listed, other, upper) => {
        const rules = { recipients: listed.map((a) => (upper ? a.toUpperCase().replace("0X", "0x") : a)) };
        const inList = listed.map((a) => a.toLowerCase()).includes(other.toLowerCase());
        expect(checkTransaction([policy(rules)], plain(listed[0]!, 1n))).toBeUndefined();
        expect(checkTransaction([policy(rules)], plain(other, 1n))?.rule).toBe(
          inList ? undefined : "recipients",
        );
        // A token transfer to `other` through a listed token contract: the beneficiary decides.
        const data = encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [other, 5n] });
        const token = listed[0]!;
        const facts = { ...plain(token, 0n), call: decodeCall(token, data, false) };
        expect(checkTransaction([policy(rules)], facts)?.rule).toBe(inList ? undefined : "recipients");
      },
    ),
  );
});

it("the daily limits of every policy are reported for the native value and listed tokens", () => {
  const token = "0x00000000000000000000000000000000000000aa" as Hex;
  const data = encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [token, 7n] });
  const facts = { ...plain(token, 3n), call: decodeCall(token, data, false) };
  const limits = dailyLimits(
    [policy({ max_value_per_day: "10", tokens: [{ token, max_per_day: "100", max_per_tx: "50" }] })],
    facts,
  );
  expect(limits.map((l) => [l.rule, l.asset, l.amount, l.limit])).toEqual([
    ["max_value_per_day", "native", 3n, 10n],
    ["tokens.max_per_day", token, 7n, 100n],
  ]);
  const over = {
    ...facts,
    call: decodeCall(
      token,
      encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [token, 51n] }),
      false,
    ),
  };
  expect(checkTransaction([policy({ tokens: [{ token, max_per_tx: "50" }] })], over)?.rule).toBe(
    "tokens.max_per_tx",
  );
});

it("typed data domains match on every field given, and nothing else", () => {
  const rules = {
    typed_data_domains: [
      { name: "App", chainId: 1, verifyingContract: "0x00000000000000000000000000000000000000bb" },
    ],
  };
  const ok = { name: "App", chainId: 1n, verifyingContract: "0x00000000000000000000000000000000000000BB" };
  expect(checkMessage([policy(rules)], { kind: "typed_data", domain: ok })).toBeUndefined();
  expect(checkMessage([policy(rules)], { kind: "message" })).toBeUndefined();
  for (const bad of [
    { ...ok, name: "Other" },
    { ...ok, chainId: 2 },
    { ...ok, verifyingContract: undefined },
    {},
  ]) {
    expect(checkMessage([policy(rules)], { kind: "typed_data", domain: bad })?.rule).toBe(
      "typed_data_domains",
    );
  }
});

it("deployments are refused once destinations are restricted, unless allow_deploy", () => {
  const deploy: TransactionFacts = {
    ...plain("0x00000000000000000000000000000000000000aa", 0n),
    to: null,
    call: decodeCall(null, "0x6000", false),
  };
  expect(checkTransaction([policy({})], deploy)).toBeUndefined();
  expect(checkTransaction([policy({ recipients: [] })], deploy)?.rule).toBe("allow_deploy");
  expect(checkTransaction([policy({ recipients: [], allow_deploy: true })], deploy)).toBeUndefined();
  expect(checkTransaction([policy({ allow_deploy: false })], deploy)?.rule).toBe("allow_deploy");
});

it("the simulation rule: Transfer logs from the address are summed per token against its limit, for any amounts", () => {
  fc.assert(
    fc.property(
      address,
      address,
      fc.array(
        amount.map((a) => a % 2n ** 200n),
        { minLength: 1, maxLength: 5 },
      ),
      amount,
      (token, from, amounts, max) => {
        const logs = amounts.map((a) => ({
          address: token,
          topics: [
            "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
            `0x${from.slice(2).padStart(64, "0")}`,
            `0x${"11".repeat(32)}`,
          ] as Hex[],
          data: `0x${a.toString(16).padStart(64, "0")}` as Hex,
        }));
        const total = amounts.reduce((x, y) => x + y, 0n);
        const rules = { simulation: { max_token_outflow: [{ token, max: max.toString() }] } };
        const denial = checkSimulation(
          [policy(rules)],
          { via: "eth_simulateV1", reverted: false, logs },
          from,
          decodeCall(token, "0x", false),
        );
        expect(denial?.rule).toBe(total > max ? "simulation.max_token_outflow" : undefined);
      },
    ),
  );
});

it("without logs (a node with eth_call only) the call's own transfer is the outflow; a revert is refused", () => {
  const token = "0x00000000000000000000000000000000000000aa" as Hex;
  const data = encodeFunctionData({ abi: ERC20, functionName: "transfer", args: [token, 500n] });
  const rules = { simulation: { max_token_outflow: [{ max: "100" }] } };
  const call = decodeCall(token, data, false);
  const over = checkSimulation(
    [policy(rules)],
    { via: "eth_call", reverted: false, logs: null },
    token,
    call,
  );
  expect(over).toMatchObject({
    rule: "simulation.max_token_outflow",
    details: { simulated_with: "eth_call" },
  });
  const reverted = checkSimulation(
    [policy({ simulation: {} })],
    { via: "eth_call", reverted: true, logs: null, revertData: "0xdeadbeef" },
    token,
    decodeCall(token, "0x", false),
  );
  expect(reverted).toMatchObject({
    rule: "simulation.refuse_reverts",
    details: { revert_data: "0xdeadbeef" },
  });
  const allowedRevert = checkSimulation(
    [policy({ simulation: { refuse_reverts: false } })],
    { via: "eth_call", reverted: true, logs: null },
    token,
    decodeCall(token, "0x", false),
  );
  expect(allowedRevert).toBeUndefined();
});
