import fc from "fast-check";
import { encodeFunctionData, type Hex, pad, parseAbi } from "viem";
import { expect, it } from "vitest";
import { decodeCall, UNLIMITED } from "./decode-call.js";
import { permitGrants } from "./permit-grants.js";
import { erc20Outflows, type Simulation } from "./simulate-transaction.js";

const OWNER: Hex = "0x1111111111111111111111111111111111111111";
const OTHER: Hex = "0x2222222222222222222222222222222222222222";
const TOKEN: Hex = "0x3333333333333333333333333333333333333333";
const TRANSFER: Hex = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const APPROVAL: Hex = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925";
const APPROVAL_FOR_ALL: Hex = "0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31";
const word = (n: bigint) => pad(`0x${n.toString(16)}`, { size: 32 });
const log = (topics: Hex[], data: Hex = "0x") => ({ address: TOKEN, topics, data });
const simulated = (logs: Simulation["logs"]): Simulation => ({
  via: "eth_simulateV1",
  reverted: false,
  logs,
});

it("every way of letting tokens go counts: transfers out, ERC20 allowances, ERC721 approvals and operator grants", () => {
  const out = (logs: Simulation["logs"]) => erc20Outflows(simulated(logs), OWNER, null).get(TOKEN);
  expect(out([log([TRANSFER, pad(OWNER), pad(OTHER)], word(7n))])).toBe(7n);
  expect(out([log([APPROVAL, pad(OWNER), pad(OTHER)], word(1000n))])).toBe(1000n);
  expect(out([log([TRANSFER, pad(OWNER), pad(OTHER), word(42n)])])).toBe(1n);
  expect(out([log([APPROVAL, pad(OWNER), pad(OTHER), word(42n)])])).toBe(1n);
  // Revoking an ERC721 approval (to nobody) grants nothing; neither does an operator grant taken back.
  expect(out([log([APPROVAL, pad(OWNER), word(0n), word(42n)])])).toBeUndefined();
  expect(out([log([APPROVAL_FOR_ALL, pad(OWNER), pad(OTHER)], word(1n))])).toBe(UNLIMITED);
  expect(out([log([APPROVAL_FOR_ALL, pad(OWNER), pad(OTHER)], word(0n))])).toBeUndefined();
  // Someone else's transfers and grants are not this address's outflow.
  expect(out([log([APPROVAL, pad(OTHER), pad(OWNER)], word(1000n))])).toBeUndefined();
  // Sums stop at everything.
  expect(
    out([
      log([APPROVAL_FOR_ALL, pad(OWNER), pad(OTHER)], word(1n)),
      log([TRANSFER, pad(OWNER), pad(OTHER)], word(7n)),
    ]),
  ).toBe(UNLIMITED);
});

it("without logs, the calldata's own grant counts: approve, increaseAllowance, permit, setApprovalForAll", () => {
  const abi = parseAbi([
    "function approve(address spender, uint256 amount)",
    "function increaseAllowance(address spender, uint256 addedValue)",
    "function setApprovalForAll(address operator, bool approved)",
    "function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)",
  ]);
  const viaCall = (data: `0x${string}`) =>
    erc20Outflows(
      { via: "eth_call", reverted: false, logs: null },
      OWNER,
      decodeCall(TOKEN, data, false).token,
    ).get(TOKEN);
  expect(viaCall(encodeFunctionData({ abi, functionName: "approve", args: [OTHER, 9n] }))).toBe(9n);
  expect(viaCall(encodeFunctionData({ abi, functionName: "increaseAllowance", args: [OTHER, 9n] }))).toBe(9n);
  expect(viaCall(encodeFunctionData({ abi, functionName: "setApprovalForAll", args: [OTHER, true] }))).toBe(
    UNLIMITED,
  );
  expect(
    viaCall(
      encodeFunctionData({
        abi,
        functionName: "permit",
        args: [OWNER, OTHER, 9n, 1n, 27, word(1n), word(2n)],
      }),
    ),
  ).toBe(9n);
});

it("permits in typed data: EIP-2612, DAI, EIP-4494 and Permit2 read as grants; anything else is none, and nothing throws", () => {
  const domain = { verifyingContract: TOKEN };
  expect(permitGrants({ primaryType: "Permit", domain, message: { value: "12" } })).toEqual([
    { token: TOKEN, amount: 12n },
  ]);
  expect(permitGrants({ primaryType: "Permit", domain, message: { allowed: true } })).toEqual([
    { token: TOKEN, amount: UNLIMITED },
  ]);
  expect(permitGrants({ primaryType: "Permit", domain, message: { tokenId: 5 } })).toEqual([
    { token: TOKEN, amount: 1n },
  ]);
  // An amount chaingate cannot read counts as everything.
  expect(permitGrants({ primaryType: "Permit", domain, message: { value: "lots" } })).toEqual([
    { token: TOKEN, amount: UNLIMITED },
  ]);
  expect(
    permitGrants({
      primaryType: "PermitBatch",
      message: {
        details: [
          { token: TOKEN, amount: 3n },
          { token: OTHER, amount: "0x10" },
        ],
      },
    }),
  ).toEqual([
    { token: TOKEN, amount: 3n },
    { token: OTHER, amount: 16n },
  ]);
  expect(permitGrants({ primaryType: "Mail", domain, message: { value: 1 } })).toEqual([]);
  fc.assert(
    fc.property(fc.anything(), fc.anything(), fc.anything(), (primaryType, d, message) => {
      expect(Array.isArray(permitGrants({ primaryType, domain: d, message }))).toBe(true);
    }),
  );
});
