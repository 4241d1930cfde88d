/** Transactions of types 0, 1 and 2 signed in one pass: their fields encoded once, hashed once, the signature appended to the same encoding. */
import {
  type AccessList,
  assertTransactionEIP1559,
  assertTransactionEIP2930,
  assertTransactionLegacy,
  type Hex,
  type TransactionSerializable,
  type TransactionSerializableEIP1559,
  type TransactionSerializableEIP2930,
  type TransactionSerializableLegacy,
} from "viem";
import { keccak256Bytes } from "./keccak.js";

/** A signature in Ethereum's form: r and s as 32 bytes, the recovery id. */
export interface SignatureBytes {
  r: Uint8Array;
  s: Uint8Array;
  yParity: number;
}

/** What a one-pass signature needs of the signer: the 32-byte hash signed and checked. */
export type SignDigest = (hash: Uint8Array) => Promise<SignatureBytes>;

/**
 * A field of the encoding: a byte string as even-length hex without its 0x ("" is the empty
 * string), or a list of fields. Hex is what the fields arrive as and what the signed bytes leave
 * as: each is written once, straight into the one buffer of its encoding.
 */
type Field = string | readonly Field[];

/** Even-length hex of a hex string's bytes (an odd length gets its leading zero, as viem's does). */
function hexOfBytes(hex: string | undefined): string {
  if (hex === undefined || hex.length <= 2) return "";
  return hex.length % 2 === 1 ? `0${hex.slice(2)}` : hex.slice(2);
}

/** An integer as RLP wants it: big-endian, no leading zero bytes, zero as the empty string. */
function hexOfInt(value: bigint | number | undefined): string {
  if (value === undefined || value === 0 || value === 0n) return "";
  const hex = value.toString(16);
  return hex.length % 2 === 1 ? `0${hex}` : hex;
}

/** Bytes as hex, leading zero bytes dropped (r and s are integers in the encoding). */
function trimmedHex(bytes: Uint8Array): string {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return Buffer.from(bytes.buffer, bytes.byteOffset + i, bytes.length - i).toString("hex");
}

/** Bytes needed for a length above 55 (big-endian, no leading zeros). */
function bytesOfLength(length: number): number {
  let size = 0;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) size++;
  return size;
}

const prefixSize = (length: number) => (length <= 55 ? 1 : 1 + bytesOfLength(length));

/** A byte string of one byte below 0x80 is its own encoding. */
const isOwnByte = (hex: string) => hex.length === 2 && Number.parseInt(hex, 16) < 0x80;

/** Encoded size of one field. */
function sizeOf(field: Field): number {
  if (typeof field === "string") {
    if (isOwnByte(field)) return 1;
    const length = field.length >>> 1;
    return prefixSize(length) + length;
  }
  const body = bodySize(field);
  return prefixSize(body) + body;
}

function bodySize(fields: readonly Field[]): number {
  let size = 0;
  for (const field of fields) size += sizeOf(field);
  return size;
}

function writePrefix(out: Buffer, at: number, length: number, short: number, long: number): number {
  if (length <= 55) {
    out[at] = short + length;
    return at + 1;
  }
  const size = bytesOfLength(length);
  out[at] = long + size;
  for (let i = size, rest = length; i > 0; i--, rest = Math.floor(rest / 256)) out[at + i] = rest % 256;
  return at + 1 + size;
}

function writeField(out: Buffer, at: number, field: Field): number {
  if (typeof field === "string") {
    if (isOwnByte(field)) {
      out[at] = Number.parseInt(field, 16);
      return at + 1;
    }
    const length = field.length >>> 1;
    const next = writePrefix(out, at, length, 0x80, 0xb7);
    // Buffer.write stops at the first pair that is not hex: what is left unwritten would be signed
    // as whatever the unzeroed buffer held. Inputs are checked at the API, so this is a bug's guard.
    if (out.write(field, next, "hex") !== length) throw new TypeError(`not hex bytes: ${field.slice(0, 80)}`);
    return next + length;
  }
  let next = writePrefix(out, at, bodySize(field), 0xc0, 0xf7);
  for (const item of field) next = writeField(out, next, item);
  return next;
}

/** Fields encoded one after the other, no list prefix: what the unsigned and signed lists share. */
function encodeFields(fields: readonly Field[]): Buffer {
  const out = Buffer.allocUnsafe(bodySize(fields));
  let at = 0;
  for (const field of fields) at = writeField(out, at, field);
  return out;
}

/** The list of `head` (fields already encoded) and then `tail`, behind the type byte of a typed transaction. */
function encodeList(type: number | undefined, head: Uint8Array, tail: readonly Field[]): Buffer {
  const body = head.length + bodySize(tail);
  const out = Buffer.allocUnsafe((type === undefined ? 0 : 1) + prefixSize(body) + body);
  let at = 0;
  if (type !== undefined) out[at++] = type;
  at = writePrefix(out, at, body, 0xc0, 0xf7);
  out.set(head, at);
  at += head.length;
  for (const field of tail) at = writeField(out, at, field);
  return out;
}

function accessListField(list: AccessList | undefined): Field {
  return (list ?? []).map(({ address, storageKeys }) => [hexOfBytes(address), storageKeys.map(hexOfBytes)]);
}

/** Each signature field as the encoding carries it. */
function signatureFields(signature: SignatureBytes, v: bigint | number): Field[] {
  return [hexOfInt(v), trimmedHex(signature.r), trimmedHex(signature.s)];
}

/** The fields of a typed transaction (1 or 2): its fee fields between the nonce and the gas. */
function typedFields(
  tx: TransactionSerializableEIP1559 | TransactionSerializableEIP2930,
  fees: readonly Field[],
): Field[] {
  return [
    hexOfInt(tx.chainId),
    hexOfInt(tx.nonce),
    ...fees,
    hexOfInt(tx.gas),
    tx.to ? hexOfBytes(tx.to) : "",
    hexOfInt(tx.value),
    hexOfBytes(tx.data),
    accessListField(tx.accessList),
  ];
}

const eip1559Fields = (tx: TransactionSerializableEIP1559) =>
  typedFields(tx, [hexOfInt(tx.maxPriorityFeePerGas), hexOfInt(tx.maxFeePerGas)]);

const eip2930Fields = (tx: TransactionSerializableEIP2930) => typedFields(tx, [hexOfInt(tx.gasPrice)]);

function legacyFields(tx: TransactionSerializableLegacy): Field[] {
  return [
    hexOfInt(tx.nonce),
    hexOfInt(tx.gasPrice),
    hexOfInt(tx.gas),
    tx.to ? hexOfBytes(tx.to) : "",
    hexOfInt(tx.value),
    hexOfBytes(tx.data),
  ];
}

/** Whether `tx` is one this file signs (else the caller serialises it the general way). */
export function signsInOnePass(tx: TransactionSerializable): boolean {
  const extra = tx as { authorizationList?: unknown; blobs?: unknown; sidecars?: unknown; input?: unknown };
  if (extra.authorizationList !== undefined || extra.blobs !== undefined || extra.sidecars !== undefined)
    return false;
  if (extra.input !== undefined) return false;
  if (tx.type === "eip1559" || tx.type === "eip2930") return true;
  // EIP-155 only: a legacy transaction without a chain id is rare and kept on the general path.
  return tx.type === "legacy" && typeof tx.chainId === "number" && tx.chainId > 0;
}

/**
 * The signed bytes of `tx`, byte for byte what viem's serializeTransaction gives with the same
 * signature (a property test holds it), with the payload encoded once and hashed once: the
 * signature's fields are appended to the fields already encoded. The same checks as viem's run first.
 */
export async function signInOnePass(tx: TransactionSerializable, sign: SignDigest): Promise<Hex> {
  if (tx.type === "eip1559" || tx.type === "eip2930") {
    const type = tx.type === "eip1559" ? 2 : 1;
    let fields: Field[];
    if (tx.type === "eip1559") {
      const eip1559 = tx as TransactionSerializableEIP1559;
      assertTransactionEIP1559(eip1559);
      fields = eip1559Fields(eip1559);
    } else {
      const eip2930 = tx as TransactionSerializableEIP2930;
      assertTransactionEIP2930(eip2930);
      fields = eip2930Fields(eip2930);
    }
    const head = encodeFields(fields);
    const signature = await sign(keccak256Bytes(encodeList(type, head, [])));
    return `0x${encodeList(type, head, signatureFields(signature, signature.yParity)).toString("hex")}`;
  }
  const legacy = tx as TransactionSerializableLegacy & { chainId: number };
  assertTransactionLegacy(legacy);
  const head = encodeFields(legacyFields(legacy));
  const signature = await sign(
    keccak256Bytes(encodeList(undefined, head, [hexOfInt(legacy.chainId), "", ""])),
  );
  const v = BigInt(legacy.chainId) * 2n + 35n + BigInt(signature.yParity);
  return `0x${encodeList(undefined, head, signatureFields(signature, v)).toString("hex")}`;
}
