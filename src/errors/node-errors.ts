/** What a node's error answer means, read in one place: standard codes first, then the wording table, reverts before faults. */
import {
  FAULT_WORDINGS,
  LIMIT_WORDINGS,
  MISSING_STATE_WORDINGS,
  type NodeErrorKind,
  RATE_LIMIT_PATTERN,
  REVERT_WORDINGS,
  SEND_WORDINGS,
  UNSUPPORTED_WORDINGS,
  type Wording,
} from "./node-wordings.js";

export type { NodeErrorKind } from "./node-wordings.js";

/** EIP-1474 / execution-apis codes whose meaning is the same on every node that uses them. */
const REVERT_CODE = 3;
const METHOD_NOT_FOUND = -32601;
/** "Limit exceeded" (EIP-1474) and HTTP 429 passed through as a code: the node is busy. */
const FAULT_CODES = new Set([-32005, 429]);

function match(table: readonly Wording[], texts: readonly string[]): NodeErrorKind | undefined {
  for (const row of table)
    for (const text of texts) {
      const found = row.pattern.exec(text);
      if (found) return typeof row.kind === "function" ? row.kind(found) : row.kind;
    }
  return undefined;
}

/** The strings of an error's data where nodes put words: a string itself, or `message`/`reason`/`data` one or two levels down. */
function dataTexts(data: unknown, depth = 0): string[] {
  if (typeof data === "string") return [data];
  if (typeof data !== "object" || data === null || depth > 1) return [];
  const record = data as Record<string, unknown>;
  return ["message", "reason", "data"].flatMap((key) => dataTexts(record[key], depth + 1));
}

/**
 * Classifies a node's error answer (geth, reth, Nethermind, Erigon, Besu, Hardhat, Ganache and anvil
 * wordings: node-wordings.ts). A revert is recognised first, wherever its text appears (message or
 * data), then the send refusals; the fault rules come last and read the message only, so no
 * contract's revert reason and no refusal of the caller's transaction can take a node out of rotation.
 */
export function classifyNodeError(message: string, code?: number, data?: unknown): NodeErrorKind {
  if (code === REVERT_CODE) return "reverted";
  const texts = [message, ...dataTexts(data)];
  const reverted = match(REVERT_WORDINGS, texts);
  if (reverted) return reverted;
  if (revertDataOf(data) !== undefined && /revert|VM Exception/i.test(message)) return "reverted";
  const refusal = match(SEND_WORDINGS, [message]);
  if (refusal) return refusal;
  // Before the codes: Besu gives -32005, the rate limit's code, to a range or batch too large.
  const limit = match(LIMIT_WORDINGS, [message]);
  if (limit) return limit;
  if (code === METHOD_NOT_FOUND) return "unsupported";
  const unsupported = match(UNSUPPORTED_WORDINGS, [message]);
  if (unsupported) return unsupported;
  if ((code !== undefined && FAULT_CODES.has(code)) || match(FAULT_WORDINGS, [message])) return "fault";
  return "other";
}

/**
 * Whether a node's error answer says it no longer holds the state of the block asked (a pruned
 * node); a revert is never that, whatever its reason says.
 */
export function isMissingState(message: string, code?: number, data?: unknown): boolean {
  if (classifyNodeError(message, code, data) === "reverted") return false;
  for (const row of MISSING_STATE_WORDINGS) {
    const found = row.pattern.exec(message);
    if (found) return row.missing ? row.missing(found) : true;
  }
  return false;
}

/** A fault that is the node refusing to work (HTTP 429, -32005 "limit exceeded", a provider's rate limit): nothing was run. */
export function isRateLimit(message: string, code?: number): boolean {
  return (
    code === 429 ||
    (code === -32005 && match(LIMIT_WORDINGS, [message]) === undefined) ||
    RATE_LIMIT_PATTERN.test(message)
  );
}

const HEX = /^0x([0-9a-fA-F]{2})*$/;
const EMBEDDED_HEX = /\b0x([0-9a-fA-F]{2}){4,}\b/;

/**
 * The revert data of a node's error, wherever the node put it: a hex string (geth, reth, anvil,
 * Besu), inside a message (Nethermind's "Reverted 0x…"), or in an object under `data` (Hardhat) or
 * `result` (Ganache's eth_estimateGas). Undefined when there is none.
 */
export function revertDataOf(data: unknown, depth = 0): `0x${string}` | undefined {
  if (typeof data === "string") {
    if (HEX.test(data)) return data as `0x${string}`;
    const embedded = EMBEDDED_HEX.exec(data)?.[0];
    return embedded === undefined || !/revert/i.test(data) ? undefined : (embedded as `0x${string}`);
  }
  if (typeof data !== "object" || data === null || depth > 2) return undefined;
  const record = data as Record<string, unknown>;
  for (const key of ["data", "result", "output", "revert"]) {
    const found = revertDataOf(record[key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
