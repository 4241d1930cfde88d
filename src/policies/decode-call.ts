/** Reads what a transaction's calldata moves: ERC20 transfers, approvals and permits, ERC721 operator grants, and chaingate's own transports. */
import { decodeFunctionData, type Hex, parseAbi } from "viem";

export interface TokenMovement {
  /** The token contract (lowercase). */
  token: string;
  amount: bigint;
  /** Who gets the tokens, or the allowance (lowercase). */
  beneficiary: string;
  how:
    | "transfer"
    | "transferFrom"
    | "approve"
    | "increaseAllowance"
    | "permit"
    | "setApprovalForAll"
    | "sendToken";
}

/** What an operator grant (setApprovalForAll) is worth: everything the address holds of that token. */
export const UNLIMITED = 2n ** 256n - 1n;

export interface CallFacts {
  /** 0x + 8 hex, or null for a plain transfer or a deployment. */
  selector: string | null;
  token: TokenMovement | null;
  /** A transport's destination-chain recipient (a message's destination contract). */
  beneficiary: string | null;
}

const ERC20 = parseAbi([
  "function transfer(address to, uint256 amount)",
  "function transferFrom(address from, address to, uint256 amount)",
  "function approve(address spender, uint256 amount)",
  // Grants: each lets another address pull the tokens later (approve-then-pull), so each counts as
  // the outflow it allows.
  "function increaseAllowance(address spender, uint256 addedValue)",
  "function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)",
  "function setApprovalForAll(address operator, bool approved)",
]);

const ENDPOINT = parseAbi([
  "function sendToken(bytes32 id, uint256 destinationChainId, address token, address to, uint256 amountOrId, bytes data)",
  "function sendMessage(bytes32 id, uint256 destinationChainId, address destination, bytes payload)",
]);

const NONE: CallFacts = { selector: null, token: null, beneficiary: null };

/**
 * What `data` sent to `to` does, as far as policies care. Calldata that does not decode as one of
 * these functions is only its selector: contract rules then decide.
 */
export function decodeCall(to: string | null, data: Hex, isEndpoint: boolean): CallFacts {
  if (to === null || data.length < 10) return NONE;
  const selector = data.slice(0, 10).toLowerCase();
  const target = to.toLowerCase();
  try {
    if (isEndpoint) {
      const call = decodeFunctionData({ abi: ENDPOINT, data });
      if (call.functionName === "sendToken") {
        const [, , token, recipient, amount] = call.args;
        return {
          selector,
          beneficiary: recipient.toLowerCase(),
          token: {
            token: token.toLowerCase(),
            amount,
            beneficiary: recipient.toLowerCase(),
            how: "sendToken",
          },
        };
      }
      return { selector, token: null, beneficiary: call.args[2].toLowerCase() };
    }
    const call = decodeFunctionData({ abi: ERC20, data });
    switch (call.functionName) {
      case "transfer":
      case "approve":
      case "increaseAllowance": {
        const [who, amount] = call.args;
        const beneficiary = who.toLowerCase();
        return {
          selector,
          beneficiary,
          token: { token: target, amount, beneficiary, how: call.functionName },
        };
      }
      case "transferFrom": {
        const [, who, amount] = call.args;
        const beneficiary = who.toLowerCase();
        return { selector, beneficiary, token: { token: target, amount, beneficiary, how: "transferFrom" } };
      }
      case "permit": {
        const [, spender, amount] = call.args;
        const beneficiary = spender.toLowerCase();
        return { selector, beneficiary, token: { token: target, amount, beneficiary, how: "permit" } };
      }
      case "setApprovalForAll": {
        const [operator, approved] = call.args;
        const beneficiary = operator.toLowerCase();
        const amount = approved ? UNLIMITED : 0n;
        return {
          selector,
          beneficiary,
          token: { token: target, amount, beneficiary, how: "setApprovalForAll" },
        };
      }
    }
  } catch {
    // Not one of the functions above: only the selector counts.
  }
  return { selector, token: null, beneficiary: null };
}
