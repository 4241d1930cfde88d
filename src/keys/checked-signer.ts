/** One signing account for every key backend: all it signs is a 32-byte hash, and every signature is recovered and compared with its address before it leaves. */
import { createRequire } from "node:module";
import {
  type Address,
  bytesToHex,
  getAddress,
  type Hash,
  type Hex,
  hashMessage,
  hashTypedData,
  hexToBytes,
  keccak256,
  type LocalAccount,
  type SerializeTransactionFn,
  serializeSignature,
  serializeTransaction,
  type TransactionSerializable,
} from "viem";
import { toAccount } from "viem/accounts";
import { hashAuthorization } from "viem/utils";
import { ChaingateError } from "../errors/chaingate-error.js";
import { type SignatureBytes, signInOnePass, signsInOnePass } from "./one-pass-transaction.js";

/** A signature as the key backend gives it: r, s and (where it knows it) the recovery id. */
export interface RawSignature {
  r: Uint8Array;
  s: Uint8Array;
  /** Absent (an HSM's r||s): found by recovering against the address. */
  recid?: number;
  /**
   * True where the signature was made from the key in this process and already recovered to the
   * key's public key with `recid` (the signing thread, sign-thread.ts): it is not recovered again.
   */
  verified?: boolean;
}

/** Signs one 32-byte hash with the address's key. */
export type SignHash = (hash: Uint8Array) => Promise<RawSignature>;

interface NativeRecover {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

let native: NativeRecover | undefined | null = null;
function nativeRecover(): NativeRecover | undefined {
  if (native === null) {
    try {
      native = createRequire(import.meta.url)("secp256k1") as NativeRecover;
    } catch {
      native = undefined;
    }
  }
  return native;
}

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;
const toBig = (bytes: Uint8Array) => BigInt(bytesToHex(bytes));
const to32 = (n: bigint) => hexToBytes(`0x${n.toString(16).padStart(64, "0")}`);

/**
 * Whether `hash` signed as (r, s, recid) recovers to the key: compared with its uncompressed
 * public key where it is known (no hash needed), else with the address.
 */
function recovers(
  hash: Uint8Array,
  r: Uint8Array,
  s: Uint8Array,
  recid: number,
  key: { address: string; publicKey?: Uint8Array },
): boolean {
  const lib = nativeRecover();
  if (!lib) throw new Error("libsecp256k1 is not available to verify signatures");
  const sig = new Uint8Array(64);
  sig.set(r, 0);
  sig.set(s, 32);
  let point: Uint8Array;
  try {
    point = lib.ecdsaRecover(sig, recid, hash, false);
  } catch {
    return false;
  }
  if (key.publicKey !== undefined) return Buffer.from(point).equals(key.publicKey);
  return `0x${keccak256(point.subarray(1)).slice(26)}` === key.address.toLowerCase();
}

/** The signature did not recover to the address that was to sign: refused, nothing released. */
export class SignatureMismatch extends ChaingateError {
  constructor(address: string, detail: string) {
    super(
      `the key backend's signature for ${address} does not recover to it (${detail}); nothing was signed, and the address signs nothing more until its backend passes a self-test`,
      { code: "SIGNATURE_MISMATCH", data: { address } },
    );
    this.name = "SignatureMismatch";
  }
}

/**
 * Where a mismatch is told (the audit log) and which addresses are held back until their backend
 * signs a self-test correctly. One per process: a faulty backend is the process's concern.
 */
export class SignatureGuard {
  private readonly held = new Set<string>();
  private onMismatch: (address: string, detail: string) => void = () => {};

  /** Where each mismatch is told (the composition root writes it to the audit log). */
  listen(onMismatch: (address: string, detail: string) => void): void {
    this.onMismatch = onMismatch;
  }

  /** Whether the address is held back (a mismatch, and no passing self-test since). */
  isHeld(address: string): boolean {
    return this.held.has(address.toLowerCase());
  }

  mismatch(address: string, detail: string): SignatureMismatch {
    this.held.add(address.toLowerCase());
    this.onMismatch(address, detail);
    return new SignatureMismatch(address, detail);
  }

  release(address: string): void {
    this.held.delete(address.toLowerCase());
  }
}

/** Low-s, with the recovery id found (or checked) against the key: Ethereum's form as bytes, or a mismatch. */
export function signatureBytes(
  hash: Uint8Array,
  raw: RawSignature,
  key: { address: string; publicKey?: Uint8Array },
  guard: SignatureGuard,
): SignatureBytes {
  let s = toBig(raw.s);
  let flip = false;
  if (s > HALF_N) {
    s = N - s;
    flip = true;
  }
  const sBytes = flip || raw.s.length !== 32 ? to32(s) : raw.s;
  if (
    raw.verified === true &&
    !flip &&
    sBytes === raw.s &&
    raw.recid !== undefined &&
    key.publicKey !== undefined
  )
    return { r: raw.r, s: sBytes, yParity: raw.recid };
  const candidates = raw.recid === undefined ? [0, 1] : [flip ? (raw.recid & 1) ^ 1 : raw.recid & 1];
  for (const recid of candidates)
    if (recovers(hash, raw.r, sBytes, recid, key)) return { r: raw.r, s: sBytes, yParity: recid };
  throw guard.mismatch(key.address, `hash ${bytesToHex(hash)}`);
}

/**
 * A viem account for `address` whose every signature (transactions, messages, typed data, EIP-7702
 * authorizations, raw hashes) comes from `signHash` and is verified before it is answered. A held
 * address runs a self-test first: a fresh hash signed and verified releases it.
 */
export function checkedAccount(
  address: Address,
  publicKey: Hex,
  signHash: SignHash,
  guard: SignatureGuard,
  source = "checked",
): LocalAccount {
  // Signatures are compared with the public key once it is known to be the address's own.
  const point = hexToBytes(publicKey);
  const owns = point.length === 65 && `0x${keccak256(point.subarray(1)).slice(26)}` === address.toLowerCase();
  const key = owns ? { address, publicKey: point } : { address };
  const signDigest = async (hash: Uint8Array): Promise<SignatureBytes> => {
    if (guard.isHeld(address)) {
      const probe = hexToBytes(keccak256(`0x${Date.now().toString(16).padStart(16, "0")}`));
      signatureBytes(probe, await signHash(probe), key, guard);
      guard.release(address);
    }
    return signatureBytes(hash, await signHash(hash), key, guard);
  };
  const sign = async (hash: Hash) => {
    const { r, s, yParity } = await signDigest(hexToBytes(hash));
    return { r: bytesToHex(r, { size: 32 }), s: bytesToHex(s, { size: 32 }), yParity };
  };
  const account = toAccount({
    address: getAddress(address),
    async sign({ hash }) {
      return serializeSignature(await sign(hash));
    },
    async signMessage({ message }) {
      return serializeSignature(await sign(hashMessage(message)));
    },
    async signTypedData(typedData) {
      return serializeSignature(await sign(hashTypedData(typedData)));
    },
    async signTransaction(transaction, options) {
      // The pipeline's own types: encoded once, hashed once (one-pass-transaction.ts).
      if (options?.serializer === undefined && signsInOnePass(transaction))
        return signInOnePass(transaction, signDigest);
      const serializer =
        (options?.serializer as SerializeTransactionFn<TransactionSerializable> | undefined) ??
        serializeTransaction;
      // As viem does: a blob transaction is signed without its sidecars.
      const signable =
        transaction.type === "eip4844" ? { ...transaction, sidecars: false as const } : transaction;
      const { r, s, yParity } = await sign(keccak256(await serializer(signable)));
      return serializer(transaction, { r, s, yParity, v: BigInt(yParity) + 27n });
    },
    async signAuthorization(authorization) {
      const { chainId, nonce } = authorization;
      const contractAddress = authorization.contractAddress ?? authorization.address;
      const { r, s, yParity } = await sign(hashAuthorization({ address: contractAddress, chainId, nonce }));
      return { address: contractAddress, chainId, nonce, r, s, v: BigInt(yParity) + 27n, yParity };
    },
  });
  return { ...account, publicKey, source } as LocalAccount;
}

/** The process's guard: every custody and operator account checks its signatures against it. */
export const signatureGuard = new SignatureGuard();
