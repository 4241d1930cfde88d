/** What a node's error answer means, read in one place: every caller classifies node answers alike. */

export type NodeErrorKind =
  | "already_known"
  | "nonce_conflict"
  | "insufficient_funds"
  | "reverted"
  | "fault"
  | "other";

/** The node's state, not the call, is at fault (rate limits, overload): another node may answer. */
const FAULT_CODES = new Set([-32005, -32097, 429]);
const FAULT = /rate limit|too many requests|capacity|temporarily unavailable|timeout|timed out/i;
/** This exact transaction is in the pool already (a resend, or a send after a failover): a success. */
const ALREADY_KNOWN = /already known|known transaction|already imported|already exists/i;
/** The nonce is taken: mined already, or another transaction holds it in the pool. */
const NONCE_CONFLICT =
  /nonce too low|nonce has already been used|already used|replacement transaction underpriced|nonce.*(lower|behind)/i;
const INSUFFICIENT_FUNDS = /insufficient funds|exceeds balance|insufficient balance/i;
/** geth and anvil answer a revert with code 3 and its data; others only say so in the message. */
const REVERT_CODE = 3;
const REVERTED = /revert/i;

/** Classifies a node's error answer (geth, Nethermind, Erigon, Besu, reth and anvil wordings). */
export function classifyNodeError(message: string, code?: number): NodeErrorKind {
  // A revert's reason is the contract's own text ("rate limit", "timeout"): never read it as a fault.
  if (code === REVERT_CODE) return "reverted";
  if ((code !== undefined && FAULT_CODES.has(code)) || FAULT.test(message)) return "fault";
  if (ALREADY_KNOWN.test(message)) return "already_known";
  if (NONCE_CONFLICT.test(message)) return "nonce_conflict";
  if (INSUFFICIENT_FUNDS.test(message)) return "insufficient_funds";
  if (REVERTED.test(message)) return "reverted";
  return "other";
}
