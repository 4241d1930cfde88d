import {
  type Hex,
  keccak256,
  parseTransaction,
  recoverMessageAddress,
  recoverTransactionAddress,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expect, it } from "vitest";
import { checkedAccount, SignatureGuard, SignatureMismatch, type SignHash } from "./checked-signer.js";
import { nativeSecp256k1, signingAccount } from "./signing-account.js";

const TX = {
  type: "eip1559",
  chainId: 1001,
  nonce: 0,
  to: "0x70997970C51812DC3A010C7901B1FCcCCc3F7Aa2",
  value: 1n,
  gas: 21_000n,
  maxFeePerGas: 2n,
  maxPriorityFeePerGas: 1n,
} as const;

it("the keystore backend signs the same bytes as viem's own account, every signature verified", async () => {
  const key = generatePrivateKey();
  const own = privateKeyToAccount(key);
  for (const native of [nativeSecp256k1(), undefined]) {
    const checked = signingAccount(key, native);
    expect(await checked.signTransaction(TX)).toBe(await own.signTransaction(TX));
    expect(await checked.signMessage({ message: "hello" })).toBe(await own.signMessage({ message: "hello" }));
    expect(await checked.signAuthorization!({ address: TX.to, chainId: 1001, nonce: 3 })).toMatchObject(
      await own.signAuthorization({ address: TX.to, chainId: 1001, nonce: 3 }),
    );
  }
});

it("a backend that corrupts one signature in N: none released that does not recover to its address; refused, told, held until a self-test passes", async () => {
  const key = generatePrivateKey();
  const own = privateKeyToAccount(key);
  const native = nativeSecp256k1()!;
  let calls = 0;
  // An HSM's r||s (no recovery id), one in five with s changed: still a valid-looking signature.
  const faulty: SignHash = async (hash) => {
    const { signature } = native.ecdsaSign(hash, Buffer.from(key.slice(2), "hex"));
    const s = signature.slice(32, 64);
    if (++calls % 5 === 0) s[31] = (s[31] ?? 0) ^ 1;
    return { r: signature.slice(0, 32), s };
  };
  const told: string[] = [];
  const guard = new SignatureGuard();
  guard.listen((address) => told.push(address));
  const account = checkedAccount(own.address, own.publicKey, faulty, guard, "test");
  let released = 0;
  let refused = 0;
  for (let nonce = 0; nonce < 40; nonce++) {
    try {
      const raw = await account.signTransaction({ ...TX, nonce });
      expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(own.address);
      expect(parseTransaction(raw).nonce).toBe(nonce);
      released++;
      const message = `m${nonce}`;
      const signature = await account.signMessage({ message });
      expect(await recoverMessageAddress({ message, signature })).toBe(own.address);
      released++;
    } catch (error) {
      expect(error).toBeInstanceOf(SignatureMismatch);
      expect((error as SignatureMismatch).code).toBe("SIGNATURE_MISMATCH");
      refused++;
    }
  }
  expect(refused).toBeGreaterThan(0);
  expect(released).toBeGreaterThan(0);
  expect(told.length).toBe(refused);
  expect(new Set(told)).toEqual(new Set([own.address]));
});

it("a backend that always answers another key's signature releases nothing and stays held", async () => {
  const key = generatePrivateKey();
  const other = generatePrivateKey();
  const native = nativeSecp256k1()!;
  const guard = new SignatureGuard();
  const own = privateKeyToAccount(key);
  const wrong: SignHash = async (hash) => {
    const { signature, recid } = native.ecdsaSign(hash, Buffer.from(other.slice(2), "hex"));
    return { r: signature.slice(0, 32), s: signature.slice(32, 64), recid };
  };
  const account = checkedAccount(own.address, own.publicKey, wrong, guard);
  for (let i = 0; i < 3; i++)
    await expect(account.signMessage({ message: `x${i}` })).rejects.toBeInstanceOf(SignatureMismatch);
  expect(guard.isHeld(own.address)).toBe(true);
  await expect(account.sign!({ hash: keccak256(toHex("h")) as Hex })).rejects.toBeInstanceOf(
    SignatureMismatch,
  );
});
