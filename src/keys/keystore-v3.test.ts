import { randomBytes } from "node:crypto";
import { ethers } from "ethers";
import fc from "fast-check";
import { bytesToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { KeyDeriver, newScryptParams } from "./kdf.js";
import { parseKeystore, seal, toKeystore, unseal } from "./keystore-v3.js";

// The two test vectors of the Web3 Secret Storage Definition (password "testpassword").
const VECTOR_KEY = "7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d";
const PBKDF2_VECTOR = {
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "6087dab2f9fdbbfaddc31a909735c1e6" },
    ciphertext: "5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46",
    kdf: "pbkdf2",
    kdfparams: {
      c: 262144,
      dklen: 32,
      prf: "hmac-sha256",
      salt: "ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd",
    },
    mac: "517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2",
  },
  id: "3198bc9c-6672-5ab3-d995-4942343ae5b6",
  version: 3,
};
const SCRYPT_VECTOR = {
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "83dbcc02d8ccb40e466191a123791e0e" },
    ciphertext: "d172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c",
    kdf: "scrypt",
    kdfparams: {
      dklen: 32,
      n: 262144,
      r: 1,
      p: 8,
      salt: "ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19",
    },
    mac: "2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097",
  },
  id: "3198bc9c-6672-5ab3-d995-4942343ae5b6",
  version: 3,
};

const deriver = new KeyDeriver(2);

async function decrypt(doc: unknown, password: string): Promise<string> {
  const parsed = parseKeystore(doc);
  return unseal(parsed.sealed, await deriver.derive(password, parsed.kdf)).toString("hex");
}

describe("keystore v3", () => {
  it.each([
    ["pbkdf2", PBKDF2_VECTOR],
    ["scrypt", SCRYPT_VECTOR],
  ])("decrypts the Web3 Secret Storage %s test vector", async (_name, vector) => {
    expect(await decrypt(vector, "testpassword")).toBe(VECTOR_KEY);
    expect(await decrypt(JSON.stringify(vector), "testpassword")).toBe(VECTOR_KEY);
  });

  it("refuses a wrong password by its MAC", async () => {
    const error = await decrypt(PBKDF2_VECTOR, "wrong").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChaingateError);
    expect((error as ChaingateError).code).toBe("WRONG_PASSWORD");
    expect((error as ChaingateError).status).toBe(401);
  });

  it("writes keystores that ethers decrypts to the same key and address", async () => {
    const kdf = newScryptParams("light");
    const derivedKey = await deriver.derive("correct horse", kdf);
    const privateKey = randomBytes(32);
    const address = privateKeyToAccount(bytesToHex(privateKey)).address;
    const keystore = toKeystore(privateKey, address, derivedKey, kdf);
    const account = await ethers.decryptKeystoreJson(JSON.stringify(keystore), "correct horse");
    expect(account.privateKey).toBe(bytesToHex(privateKey));
    expect(account.address).toBe(address);
    expect(keystore.crypto.kdfparams).toEqual({ n: 4096, r: 8, p: 1, dklen: 32, salt: kdf.salt });
  });

  it("reads keystores written by ethers", async () => {
    const wallet = new ethers.Wallet(ethers.hexlify(ethers.randomBytes(32)));
    const json = await ethers.encryptKeystoreJson(wallet, "pw", { scrypt: { N: 1024 } });
    expect(`0x${await decrypt(json, "pw")}`).toBe(wallet.privateKey);
  });

  it("never reuses an IV under one key, and seal/unseal round-trips any secret (property)", async () => {
    const key = randomBytes(32);
    const ivs = new Set<string>();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 128 }), (secret) => {
        const sealed = seal(secret, key);
        expect(ivs.has(sealed.iv)).toBe(false);
        ivs.add(sealed.iv);
        expect(new Uint8Array(unseal(sealed, key))).toEqual(secret);
      }),
      { numRuns: 300 },
    );
  });

  it("rejects malformed keystores with INVALID_KEYSTORE, whatever the input (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (doc) => {
        try {
          parseKeystore(doc);
        } catch (error) {
          expect((error as ChaingateError).code).toBe("INVALID_KEYSTORE");
        }
      }),
    );
    const tooCostly = structuredClone(SCRYPT_VECTOR);
    tooCostly.crypto.kdfparams.n = 2 ** 24;
    return expect(decrypt(tooCostly, "testpassword")).rejects.toMatchObject({ code: "INVALID_KEYSTORE" });
  });
});
