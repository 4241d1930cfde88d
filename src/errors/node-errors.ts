/** What a node's error message means, read in one place: every caller classifies node answers alike. */

export type NodeErrorKind = "already_known" | "nonce_conflict" | "insufficient_funds" | "other";

/** This exact transaction is in the pool already (a resend, or a send after a failover): a success. */
const ALREADY_KNOWN = /already known|known transaction|already imported|already exists/i;
/** The nonce is taken: mined already, or another transaction holds it in the pool. */
const NONCE_CONFLICT =
  /nonce too low|nonce has already been used|already used|replacement transaction underpriced|nonce.*(lower|behind)/i;
const INSUFFICIENT_FUNDS = /insufficient funds|exceeds balance|insufficient balance/i;

/** Classifies a node's error message (geth, Nethermind, Erigon, Besu, reth and anvil wordings). */
export function classifyNodeError(message: string): NodeErrorKind {
  if (ALREADY_KNOWN.test(message)) return "already_known";
  if (NONCE_CONFLICT.test(message)) return "nonce_conflict";
  if (INSUFFICIENT_FUNDS.test(message)) return "insufficient_funds";
  return "other";
}
