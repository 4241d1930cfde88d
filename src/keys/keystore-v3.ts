/** Web3 Secret Storage (keystore v3): aes-128-ctr under a KDF-derived key, keccak-256 MAC. */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { KdfParams } from "./kdf.js";

export interface KeystoreV3 {
  version: 3;
  id: string;
  address?: string;
  crypto: {
    cipher: "aes-128-ctr";
    cipherparams: { iv: string };
    ciphertext: string;
    kdf: "scrypt" | "pbkdf2";
    kdfparams: Record<string, unknown>;
    mac: string;
  };
}

/** A secret sealed with a wallet's derived key (the same cipher and MAC as a keystore, without the KDF). */
export interface SealedSecret {
  iv: string;
  ciphertext: string;
  mac: string;
}

function mac(derivedKey: Uint8Array, ciphertext: Uint8Array): Buffer {
  return Buffer.from(keccak_256(Buffer.concat([derivedKey.subarray(16, 32), ciphertext])));
}

/** Encrypts with a fresh random IV: keys shared by a wallet's keystores never reuse a CTR stream. */
export function seal(secret: Uint8Array, derivedKey: Uint8Array): SealedSecret {
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-128-ctr", derivedKey.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([cipher.update(secret), cipher.final()]);
  return {
    iv: iv.toString("hex"),
    ciphertext: ciphertext.toString("hex"),
    mac: mac(derivedKey, ciphertext).toString("hex"),
  };
}

export function wrongPassword(): ChaingateError {
  return new ChaingateError("Wrong password", { code: "WRONG_PASSWORD" });
}

/** Decrypts after checking the MAC in constant time; a mismatch means a wrong password. */
export function unseal(sealed: SealedSecret, derivedKey: Uint8Array): Buffer {
  const ciphertext = Buffer.from(sealed.ciphertext, "hex");
  const expected = Buffer.from(sealed.mac, "hex");
  const actual = mac(derivedKey, ciphertext);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw wrongPassword();
  const decipher = createDecipheriv("aes-128-ctr", derivedKey.subarray(0, 16), Buffer.from(sealed.iv, "hex"));
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

export function toKeystore(
  privateKey: Uint8Array,
  address: string,
  derivedKey: Uint8Array,
  kdf: KdfParams,
): KeystoreV3 {
  const sealed = seal(privateKey, derivedKey);
  const { kdf: name, ...kdfparams } = kdf;
  return {
    version: 3,
    id: randomUUID(),
    address: address.toLowerCase().replace(/^0x/, ""),
    crypto: {
      cipher: "aes-128-ctr",
      cipherparams: { iv: sealed.iv },
      ciphertext: sealed.ciphertext,
      kdf: name,
      kdfparams,
      mac: sealed.mac,
    },
  };
}

function invalid(detail: string): ChaingateError {
  return new ChaingateError(`Invalid keystore: ${detail}`, {
    code: "INVALID_KEYSTORE",
  });
}

const HEX = /^([0-9a-fA-F]{2})+$/;

/** Reads a keystore v3 document (ours or anyone's), checking every field we rely on. */
export function parseKeystore(input: unknown): { kdf: KdfParams; sealed: SealedSecret; address?: string } {
  let doc = input;
  if (typeof input === "string") {
    try {
      doc = JSON.parse(input);
    } catch {
      throw invalid("not JSON");
    }
  }
  if (typeof doc !== "object" || doc === null) throw invalid("not an object");
  const record = doc as Record<string, unknown>;
  // geth writes "crypto"; some old tools wrote "Crypto".
  const crypto = (record.crypto ?? record.Crypto) as Record<string, unknown> | undefined;
  if (Number(record.version) !== 3) throw invalid("version must be 3");
  if (typeof crypto !== "object" || crypto === null) throw invalid("crypto section missing");
  if (crypto.cipher !== "aes-128-ctr") throw invalid("cipher must be aes-128-ctr");
  const iv = (crypto.cipherparams as { iv?: unknown } | undefined)?.iv;
  const { ciphertext, mac: macHex, kdf } = crypto as { ciphertext?: unknown; mac?: unknown; kdf?: unknown };
  if (typeof iv !== "string" || !HEX.test(iv) || iv.length !== 32)
    throw invalid("cipherparams.iv must be 16 hex bytes");
  if (typeof ciphertext !== "string" || !HEX.test(ciphertext)) throw invalid("ciphertext must be hex");
  if (typeof macHex !== "string" || !HEX.test(macHex) || macHex.length !== 64)
    throw invalid("mac must be 32 hex bytes");
  const params = crypto.kdfparams as Record<string, unknown> | undefined;
  if (typeof params !== "object" || params === null) throw invalid("kdfparams missing");
  let kdfParams: KdfParams;
  if (kdf === "scrypt") {
    kdfParams = {
      kdf: "scrypt",
      n: Number(params.n),
      r: Number(params.r),
      p: Number(params.p),
      dklen: Number(params.dklen),
      salt: String(params.salt),
    };
  } else if (kdf === "pbkdf2") {
    if (params.prf !== "hmac-sha256") throw invalid("pbkdf2 prf must be hmac-sha256");
    kdfParams = {
      kdf: "pbkdf2",
      c: Number(params.c),
      prf: "hmac-sha256",
      dklen: Number(params.dklen),
      salt: String(params.salt),
    };
  } else throw invalid("kdf must be scrypt or pbkdf2");
  const address = typeof record.address === "string" ? record.address : undefined;
  return {
    kdf: kdfParams,
    sealed: { iv, ciphertext, mac: macHex },
    ...(address === undefined ? {} : { address }),
  };
}
