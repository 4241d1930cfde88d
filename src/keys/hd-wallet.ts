/** BIP-39 seeds and BIP-44 Ethereum accounts: m/44'/60'/0'/0/i. */
import { pbkdf2 } from "node:crypto";
import { promisify } from "node:util";
import { HDKey } from "@scure/bip32";
import { generateMnemonic, mnemonicToEntropy, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { bytesToHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ChaingateError } from "../errors/chaingate-error.js";

export interface DerivedAccount {
  index: number;
  privateKey: Uint8Array;
  address: Hex;
  publicKey: Hex;
}

/** 24 words: 256 bits of entropy. */
export function newMnemonic(): string {
  return generateMnemonic(wordlist, 256);
}

export function normalizeMnemonic(phrase: string): string {
  const normalized = phrase.normalize("NFKD").trim().toLowerCase().split(/\s+/).join(" ");
  if (!validateMnemonic(normalized, wordlist)) {
    throw new ChaingateError("Invalid mnemonic: not a valid BIP-39 English phrase (checksum or words)", {
      code: "INVALID_MNEMONIC",
    });
  }
  return normalized;
}

export const mnemonicEntropy = (mnemonic: string): Uint8Array => mnemonicToEntropy(mnemonic, wordlist);

export function accountFromPrivateKey(index: number, privateKey: Uint8Array): DerivedAccount {
  const account = privateKeyToAccount(bytesToHex(privateKey));
  return { index, privateKey, address: account.address, publicKey: account.publicKey };
}

const pbkdf2Async = promisify(pbkdf2);

/**
 * BIP-39 seed (PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic", no passphrase) on Node's native
 * implementation in the thread pool: the pure-JS one would hold the event loop for tens of ms.
 */
export async function mnemonicToSeed(mnemonic: string): Promise<Uint8Array> {
  return new Uint8Array(
    await pbkdf2Async(Buffer.from(mnemonic.normalize("NFKD")), Buffer.from("mnemonic"), 2048, 64, "sha512"),
  );
}

/**
 * Derives accounts `from..from+count-1`; the seed is computed once for all of them. Each derivation
 * is a few ms of elliptic-curve work on the main thread, so the loop yields between addresses to
 * keep other requests flowing while a large wallet is made.
 */
export async function deriveAccounts(
  mnemonic: string,
  from: number,
  count: number,
): Promise<DerivedAccount[]> {
  const seed = await mnemonicToSeed(mnemonic);
  const base = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'/0");
  seed.fill(0);
  const accounts: DerivedAccount[] = [];
  for (let index = from; index < from + count; index++) {
    const child = base.deriveChild(index);
    if (!child.privateKey) throw new Error(`no private key at index ${index}`);
    accounts.push(accountFromPrivateKey(index, child.privateKey));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return accounts;
}
