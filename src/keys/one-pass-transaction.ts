/** Transactions of types 0, 1 and 2 signed in one pass: their fields encoded once, hashed once, the signature appended to the same encoding. */
import { keccak_256 } from "@noble/hashes/sha3.js";
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

/** A signature in Ethereum's form: r and s as 32 bytes, the recovery id. */
export interface SignatureBytes {
  r: Uint8Array;
  s: Uint8Array;
  yParity: number;
}

/** What a one-pass signature needs of the signer: the 32-byte hash signed and checked. */
export type SignDigest = (hash: Uint8Array) => Promise<SignatureBytes>;

type Field = Uint8Array | Field[];

const EMPTY = new Uint8Array(0);

function bytesOfHex(hex: string): Uint8Array {
  return hex.length <= 2 ? EMPTY : Uint8Array.from(Buffer.from(hex.slice(2), "hex"));
}

/** An integer as RLP wants it: big-endian, no leading zero bytes, zero as the empty string. */
function bytesOfInt(value: bigint | number | undefined): Uint8Array {
  if (value === undefined || value === 0 || value === 0n) return EMPTY;
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

/** Leading zero bytes dropped (r and s are integers in the encoding). */
function trimmed(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

function lengthPrefix(length: number, short: number, long: number): Uint8Array {
  if (length <= 55) return Uint8Array.of(short + length);
  const size = bytesOfInt(length);
  return Uint8Array.of(long + size.length, ...size);
}

/** RLP of one field (a byte string, or a list of fields). */
function encode(field: Field): Uint8Array {
  if (field instanceof Uint8Array) {
    if (field.length === 1 && field[0]! < 0x80) return field;
    return Buffer.concat([lengthPrefix(field.length, 0x80, 0xb7), field]);
  }
  return encodeList(field.map(encode));
}

/** A list whose items are already encoded. */
function encodeList(items: readonly Uint8Array[]): Uint8Array {
  const body = Buffer.concat(items);
  return Buffer.concat([lengthPrefix(body.length, 0xc0, 0xf7), body]);
}

function accessListField(list: AccessList | undefined): Field {
  return (list ?? []).map(({ address, storageKeys }) => [bytesOfHex(address), storageKeys.map(bytesOfHex)]);
}

/** The typed envelope: the type byte, then the list. */
const typed = (type: number, items: readonly Uint8Array[]) =>
  Buffer.concat([Uint8Array.of(type), encodeList(items)]);

const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`;

/** Each signature field as the encoding carries it. */
function signatureItems(signature: SignatureBytes, v: bigint | number): Uint8Array[] {
  return [encode(bytesOfInt(v)), encode(trimmed(signature.r)), encode(trimmed(signature.s))];
}

/** The fields of a typed transaction (1 or 2): its fee fields between the nonce and the gas. */
function typedItems(
  tx: TransactionSerializableEIP1559 | TransactionSerializableEIP2930,
  fees: readonly Uint8Array[],
): Uint8Array[] {
  return [
    bytesOfInt(tx.chainId),
    bytesOfInt(tx.nonce),
    ...fees,
    bytesOfInt(tx.gas),
    tx.to ? bytesOfHex(tx.to) : EMPTY,
    bytesOfInt(tx.value),
    bytesOfHex(tx.data ?? "0x"),
    accessListField(tx.accessList),
  ].map(encode);
}

const eip1559Items = (tx: TransactionSerializableEIP1559) =>
  typedItems(tx, [bytesOfInt(tx.maxPriorityFeePerGas), bytesOfInt(tx.maxFeePerGas)]);

const eip2930Items = (tx: TransactionSerializableEIP2930) => typedItems(tx, [bytesOfInt(tx.gasPrice)]);

function legacyItems(tx: TransactionSerializableLegacy): Uint8Array[] {
  return [
    bytesOfInt(tx.nonce),
    bytesOfInt(tx.gasPrice),
    bytesOfInt(tx.gas),
    tx.to ? bytesOfHex(tx.to) : EMPTY,
    bytesOfInt(tx.value),
    bytesOfHex(tx.data ?? "0x"),
  ].map(encode);
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
    let items: Uint8Array[];
    if (tx.type === "eip1559") {
      const eip1559 = tx as TransactionSerializableEIP1559;
      assertTransactionEIP1559(eip1559);
      items = eip1559Items(eip1559);
    } else {
      const eip2930 = tx as TransactionSerializableEIP2930;
      assertTransactionEIP2930(eip2930);
      items = eip2930Items(eip2930);
    }
    const signature = await sign(keccak_256(typed(type, items)));
    return hexOf(typed(type, [...items, ...signatureItems(signature, signature.yParity)]));
  }
  const legacy = tx as TransactionSerializableLegacy & { chainId: number };
  assertTransactionLegacy(legacy);
  const items = legacyItems(legacy);
  const signature = await sign(
    keccak_256(encodeList([...items, encode(bytesOfInt(legacy.chainId)), encode(EMPTY), encode(EMPTY)])),
  );
  const v = BigInt(legacy.chainId) * 2n + 35n + BigInt(signature.yParity);
  return hexOf(encodeList([...items, ...signatureItems(signature, v)]));
}
