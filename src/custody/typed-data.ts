/** EIP-712 documents from eth_signTypedData_v4: parsed, checked, and made ready for viem. */
import { type TypedDataDefinition, validateTypedData } from "viem";
import { invalidParams } from "../errors/rpc-errors.js";

type Fields = readonly { name: string; type: string }[];
type Types = Record<string, Fields>;

const INTEGER = /^u?int(\d+)?$/;

/** JSON numbers and decimal or hex strings for integer fields, as ethers, MetaMask and viem send them. */
function integer(value: unknown, path: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "string" && /^(-?\d+|0x[0-9a-fA-F]+)$/.test(value.trim())) return BigInt(value.trim());
  throw invalidParams(`typed data: ${path} must be an integer (number, decimal or 0x string)`);
}

function normalize(types: Types, type: string, value: unknown, path: string): unknown {
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) throw invalidParams(`typed data: ${path} must be an array`);
    return value.map((item, i) => normalize(types, array[1]!, item, `${path}[${i}]`));
  }
  if (INTEGER.test(type)) return integer(value, path);
  const fields = types[type];
  if (fields) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw invalidParams(`typed data: ${path} must be an object of type ${type}`);
    }
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      const inner = (value as Record<string, unknown>)[field.name];
      if (inner === undefined) throw invalidParams(`typed data: ${path}.${field.name} is missing`);
      out[field.name] = normalize(types, field.type, inner, `${path}.${field.name}`);
    }
    return out;
  }
  return value;
}

/** Accepts the document as a JSON string or an object; anything malformed is -32602 naming the problem. */
export function readTypedData(raw: unknown): TypedDataDefinition {
  let doc: unknown = raw;
  if (typeof raw === "string") {
    try {
      doc = JSON.parse(raw);
    } catch {
      throw invalidParams("typed data is not valid JSON");
    }
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw invalidParams("typed data must be an object with types, primaryType, domain and message");
  }
  const { types, primaryType, domain, message } = doc as Record<string, unknown>;
  if (typeof types !== "object" || types === null || Array.isArray(types)) {
    throw invalidParams("typed data: types must be an object");
  }
  for (const [name, fields] of Object.entries(types)) {
    if (
      !Array.isArray(fields) ||
      !fields.every(
        (f) =>
          typeof f === "object" && f !== null && typeof f.name === "string" && typeof f.type === "string",
      )
    ) {
      throw invalidParams(`typed data: types.${name} must be a list of {name, type}`);
    }
  }
  if (typeof primaryType !== "string" || !(primaryType in types)) {
    throw invalidParams("typed data: primaryType must name one of types");
  }
  if (typeof domain !== "object" || domain === null || Array.isArray(domain)) {
    throw invalidParams("typed data: domain must be an object");
  }
  const t = types as Types;
  const d = { ...(domain as Record<string, unknown>) };
  if (d.chainId !== undefined) d.chainId = integer(d.chainId, "domain.chainId");
  const definition = {
    types: t,
    primaryType,
    domain: d,
    message: primaryType === "EIP712Domain" ? {} : normalize(t, primaryType, message, "message"),
  } as unknown as TypedDataDefinition;
  try {
    validateTypedData(definition);
  } catch (error) {
    const short = (error as { shortMessage?: string }).shortMessage ?? (error as Error).message;
    throw invalidParams(`typed data: ${short}`);
  }
  return definition;
}
