/** A signing account whose transaction signatures come from libsecp256k1 (native) when it loads, and from viem's JavaScript otherwise: the same bytes either way. */
import { createRequire } from "node:module";
import {
  bytesToHex,
  type Hex,
  hexToBytes,
  keccak256,
  type LocalAccount,
  type SerializeTransactionFn,
  serializeTransaction,
  type TransactionSerializable,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";

/** The one libsecp256k1 call used: a deterministic (RFC 6979), low-s signature with its recovery id. */
export interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

let loaded: NativeSecp256k1 | undefined | null = null;

/**
 * The addon's bindings only (not the package's own fallback to elliptic): where no prebuilt binary
 * fits the platform, viem's signer is used instead.
 */
export function nativeSecp256k1(): NativeSecp256k1 | undefined {
  if (loaded === null) {
    try {
      loaded = createRequire(import.meta.url)("secp256k1/bindings") as NativeSecp256k1;
    } catch {
      loaded = undefined;
    }
  }
  return loaded;
}

/**
 * viem's account for `privateKey`, with `signTransaction` done natively (about 5x faster than the
 * JavaScript curve on this machine's class of CPU). Messages and typed data stay viem's: they are
 * rare next to transactions.
 */
export function signingAccount(
  privateKey: Hex,
  native: NativeSecp256k1 | undefined = nativeSecp256k1(),
): LocalAccount {
  const base = privateKeyToAccount(privateKey);
  if (!native) return base;
  const key = hexToBytes(privateKey);
  const signTransaction = async (
    transaction: TransactionSerializable,
    options?: { serializer?: SerializeTransactionFn<TransactionSerializable> },
  ): Promise<Hex> => {
    const serializer = options?.serializer ?? serializeTransaction;
    // As viem does: a blob transaction is signed without its sidecars.
    const signable =
      transaction.type === "eip4844" ? { ...transaction, sidecars: false as const } : transaction;
    const hash = keccak256(await serializer(signable));
    const { signature, recid } = native.ecdsaSign(hexToBytes(hash), key);
    return serializer(transaction, {
      r: bytesToHex(signature.subarray(0, 32)),
      s: bytesToHex(signature.subarray(32, 64)),
      v: recid === 1 ? 28n : 27n,
      yParity: recid,
    });
  };
  return { ...base, signTransaction: signTransaction as LocalAccount["signTransaction"] };
}
