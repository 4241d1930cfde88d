/** Reads what a transaction's calldata moves: ERC20 transfers and approvals, and chaingate's own transports. */
import { decodeFunctionData, type Hex, parseAbi } from "viem";

export interface TokenMovement {
  /** The token contract (lowercase). */
  token: string;
  amount: bigint;
  /** Who gets the tokens, or the allowance (lowercase). */
  beneficiary: string;
  how: "transfer" | "transferFrom" | "approve" | "sendToken";
}

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
      case "approve": {
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
    }
  } catch {
    // Not one of the functions above: only the selector counts.
  }
  return { selector, token: null, beneficiary: null };
}
