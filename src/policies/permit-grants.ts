/** What a signed permit lets someone else take: EIP-2612, DAI-style, EIP-4494 (ERC721) and Permit2 documents read as token grants. */
import { UNLIMITED } from "./decode-call.js";

export interface PermitGrant {
  /** The token contract (lower case). */
  token: string;
  amount: bigint;
}

type Doc = { primaryType?: unknown; domain?: unknown; message?: unknown };

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function amountOf(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^(\d+|0x[0-9a-fA-F]+)$/.test(v)) return BigInt(v);
  return undefined;
}

const address = (v: unknown) =>
  typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v) ? v.toLowerCase() : undefined;

/** Permit2's token/amount pairs (`details` of PermitSingle/PermitBatch, `permitted` of the transfer forms). */
function permit2Pairs(entries: unknown): PermitGrant[] {
  return [entries].flat().flatMap((entry) => {
    const e = record(entry);
    const token = address(e?.token);
    const amount = amountOf(e?.amount);
    return token === undefined || amount === undefined ? [] : [{ token, amount }];
  });
}

/**
 * The grants a typed-data document makes, or [] when it is not a permit. A permit that names an
 * amount chaingate cannot read counts as everything (UNLIMITED): an outflow cap fails closed.
 */
export function permitGrants(doc: Doc): PermitGrant[] {
  const message = record(doc.message);
  const domain = record(doc.domain);
  if (message === undefined) return [];
  const primary = doc.primaryType;
  if (primary === "PermitSingle" || primary === "PermitBatch") return permit2Pairs(message.details);
  if (primary === "PermitTransferFrom" || primary === "PermitBatchTransferFrom")
    return permit2Pairs(message.permitted);
  if (primary !== "Permit") return [];
  const token = address(domain?.verifyingContract);
  if (token === undefined) return [];
  // EIP-4494 (ERC721): one token by id.
  if ("tokenId" in message) return [{ token, amount: 1n }];
  // DAI: `allowed` true grants everything.
  if ("allowed" in message) return message.allowed === true ? [{ token, amount: UNLIMITED }] : [];
  return [{ token, amount: amountOf(message.value) ?? UNLIMITED }];
}
