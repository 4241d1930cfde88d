/** A keystore key's signing account: hashes signed by libsecp256k1 (native) when it loads, by viem's JavaScript otherwise, every signature verified before it leaves (checked-signer.ts). */
import { createRequire } from "node:module";
import { type Address, bytesToHex, getAddress, type Hex, hexToBytes } from "viem";
import { privateKeyToAccount, sign } from "viem/accounts";
import { checkedAccount, type SignatureGuard, type SignHash, signatureGuard } from "./checked-signer.js";
import { keccak256Bytes } from "./keccak.js";
import { type SignThread, signThread } from "./sign-thread.js";

/** The libsecp256k1 calls used: a deterministic (RFC 6979), low-s signature with its recovery id, and a key's public key. */
export interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  publicKeyCreate(privateKey: Uint8Array, compressed: boolean): Uint8Array;
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
 * Hashes signed with `privateKey`: natively (about 5x faster on this machine's class of CPU), on the
 * signing thread where it runs (each signature verified there against `publicKey`), else by viem.
 */
function keySigner(
  privateKey: Hex,
  publicKey: Hex,
  native: NativeSecp256k1 | undefined,
  thread: SignThread | undefined,
): SignHash {
  const key = hexToBytes(privateKey);
  if (native && thread) {
    const point = hexToBytes(publicKey);
    return async (hash) => {
      const { signature, recid, verified } = await thread.sign(key, hash, point);
      return { r: signature.subarray(0, 32), s: signature.subarray(32, 64), recid, verified };
    };
  }
  if (native)
    return async (hash) => {
      const { signature, recid } = native.ecdsaSign(hash, key);
      return { r: signature.subarray(0, 32), s: signature.subarray(32, 64), recid };
    };
  return async (hash) => {
    const { r, s, yParity } = await sign({ hash: `0x${Buffer.from(hash).toString("hex")}`, privateKey });
    return { r: hexToBytes(r), s: hexToBytes(s), recid: yParity ?? 0 };
  };
}

/**
 * The key's uncompressed public key and checksummed address. Natively about 0.03 ms where viem's
 * JavaScript takes 0.25-0.5 ms warm and over 1 ms cold: every first unlock of an address (after a
 * start, or once its cache entry lapses) paid that on the request's own path (decision 214).
 */
function keyIdentity(
  privateKey: Hex,
  native: NativeSecp256k1 | undefined,
): { address: Address; publicKey: Hex } {
  if (native === undefined) return privateKeyToAccount(privateKey);
  // An invalid key (zero, or not below the curve's order) throws here, as it does in viem.
  const point = native.publicKeyCreate(hexToBytes(privateKey), false);
  return {
    address: getAddress(bytesToHex(keccak256Bytes(point.subarray(1)).subarray(12))),
    publicKey: bytesToHex(point),
  };
}

/** The signing account of a keystore key: the same bytes viem's own account gives, each signature verified. */
export function signingAccount(
  privateKey: Hex,
  native: NativeSecp256k1 | undefined = nativeSecp256k1(),
  guard: SignatureGuard = signatureGuard,
  thread: SignThread | undefined = native === undefined ? undefined : signThread(),
): ReturnType<typeof checkedAccount> {
  const { address, publicKey } = keyIdentity(privateKey, native);
  return checkedAccount(
    address,
    publicKey,
    keySigner(privateKey, publicKey, native, thread),
    guard,
    "privateKey",
  );
}
