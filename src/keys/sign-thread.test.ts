/** The signing thread: signatures asked together are made on it (half) and on the event loop (half), byte-identical to viem's, each verified, and a lost thread loses no signature. */
import { createRequire } from "node:module";
import fc from "fast-check";
import type { Hex, TransactionSerializable } from "viem";
import { keccak256, toBytes } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect, it } from "vitest";
import { SignatureGuard } from "./checked-signer.js";
import { SignThread, signThread } from "./sign-thread.js";
import { nativeSecp256k1, signingAccount } from "./signing-account.js";

const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const privateKey = fc
  .bigInt({ min: 1n, max: ORDER - 1n })
  .map((k) => `0x${k.toString(16).padStart(64, "0")}` as Hex);
const bindingsPath = createRequire(import.meta.url).resolve("secp256k1/bindings");
type Bindings = ConstructorParameters<typeof SignThread>[0];
const bindings = createRequire(import.meta.url)("secp256k1/bindings") as Bindings;

const transfer = (nonce: number): TransactionSerializable => ({
  type: "eip1559",
  chainId: 1001,
  nonce,
  gas: 21_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1n,
  to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  value: BigInt(nonce) * 7n,
});

it("transactions signed together are made on the thread and on the loop, each byte-identical to viem's", async () => {
  const thread = signThread();
  if (process.platform === "linux" && process.arch === "x64") expect(thread).toBeDefined();
  if (thread === undefined) return;
  await fc.assert(
    fc.asyncProperty(privateKey, fc.integer({ min: 2, max: 24 }), async (key, count) => {
      const before = { ...thread.made };
      const account = signingAccount(key);
      const txs = Array.from({ length: count }, (_, i) => transfer(i));
      // Asked in one turn, as a group commit's job asks them.
      const signed = await Promise.all(txs.map((tx) => account.signTransaction!(tx)));
      const viem = privateKeyToAccount(key);
      for (const [i, tx] of txs.entries()) expect(signed[i]).toBe(await viem.signTransaction(tx));
      expect(thread.made.thread - before.thread).toBe(Math.ceil(count / 2));
      expect(thread.made.loop - before.loop).toBe(Math.floor(count / 2));
    }),
    { numRuns: 30 },
  );
});

it("a signature asked alone is made on the event loop: no worker round trip for a caller waiting alone", async () => {
  const thread = new SignThread(bindings, bindingsPath);
  const key = toBytes(keccak256(toBytes("alone")));
  const publicKey = nativePublicKey(key);
  const answer = await thread.sign(key, toBytes(keccak256(toBytes("one"))), publicKey);
  expect(answer.verified).toBe(true);
  expect(thread.made).toEqual({ thread: 0, loop: 1 });
});

it("a signature that does not recover to the public key given is answered unverified, on the thread and on the loop", async () => {
  const thread = new SignThread(bindings, bindingsPath);
  const key = toBytes(keccak256(toBytes("signer")));
  const other = nativePublicKey(toBytes(keccak256(toBytes("someone else"))));
  const hashes = Array.from({ length: 4 }, (_, i) => toBytes(keccak256(toBytes(`h${i}`))));
  const answers = await Promise.all(hashes.map((hash) => thread.sign(key, hash, other)));
  expect(answers.map((a) => a.verified)).toEqual([false, false, false, false]);
  expect(thread.made).toEqual({ thread: 2, loop: 2 });
});

it("an unverified signature from the thread is recovered again by the checked signer and refused", async () => {
  const key = keccak256(toBytes("refused"));
  const guard = new SignatureGuard();
  const mismatches: string[] = [];
  guard.listen((address) => mismatches.push(address));
  // A thread whose every answer comes back unverified (as a faulty one would): the account must not
  // trust the flag, and the recovery it then makes finds the signature is not the address's.
  const faulty = new SignThread(
    {
      ecdsaSign: (hash, privateKey) => {
        const made = bindings.ecdsaSign(hash, privateKey);
        const signature = new Uint8Array(made.signature);
        signature[40] = signature[40]! ^ 1;
        return { signature, recid: made.recid };
      },
      ecdsaRecover: bindings.ecdsaRecover,
    },
    bindingsPath,
  );
  const account = signingAccount(key, nativeSecp256k1(), guard, faulty);
  await expect(account.signTransaction!(transfer(0))).rejects.toThrow(/does not recover/);
  expect(mismatches).toEqual([account.address]);
});

it("a thread that cannot start signs everything on the event loop, losing nothing", async () => {
  const thread = new SignThread(bindings, "/nonexistent/secp256k1-bindings.node");
  const key = toBytes(keccak256(toBytes("lost")));
  const publicKey = nativePublicKey(key);
  const hashes = Array.from({ length: 6 }, (_, i) => toBytes(keccak256(toBytes(`lost${i}`))));
  const answers = await Promise.all(hashes.map((hash) => thread.sign(key, hash, publicKey)));
  expect(answers.every((a) => a.verified)).toBe(true);
  for (const [i, hash] of hashes.entries())
    expect(Buffer.from(answers[i]!.signature)).toEqual(Buffer.from(bindings.ecdsaSign(hash, key).signature));
  expect(thread.made.thread).toBe(0);
  expect(thread.made.loop).toBe(6);
  // Later asks never wait on the lost thread.
  const later = await Promise.all(hashes.slice(0, 3).map((hash) => thread.sign(key, hash, publicKey)));
  expect(later.every((a) => a.verified)).toBe(true);
});

it("a key, hash or public key of the wrong size is refused, and the signatures asked with it are still made", async () => {
  const thread = new SignThread(bindings, bindingsPath);
  const key = toBytes(keccak256(toBytes("sizes")));
  const publicKey = nativePublicKey(key);
  const hash = toBytes(keccak256(toBytes("h")));
  const asked = [
    thread.sign(key.subarray(1), hash, publicKey),
    thread.sign(key, hash, publicKey),
    thread.sign(key, hash.subarray(0, 31), publicKey),
    thread.sign(key, hash, new Uint8Array(66)),
    thread.sign(key, hash, publicKey),
  ];
  const settled = await Promise.allSettled(asked);
  expect(settled.map((s) => s.status)).toEqual([
    "rejected",
    "fulfilled",
    "rejected",
    "rejected",
    "fulfilled",
  ]);
  for (const i of [1, 4]) {
    const answer = (settled[i] as PromiseFulfilledResult<Awaited<(typeof asked)[number]>>).value;
    expect(answer.verified).toBe(true);
    expect(Buffer.from(answer.signature)).toEqual(Buffer.from(bindings.ecdsaSign(hash, key).signature));
  }
  // The two made went as one list: one on the thread, one on the loop.
  expect(thread.made).toEqual({ thread: 1, loop: 1 });
});

function nativePublicKey(key: Uint8Array): Uint8Array {
  const lib = createRequire(import.meta.url)("secp256k1") as {
    publicKeyCreate(key: Uint8Array, compressed: boolean): Uint8Array;
  };
  return lib.publicKeyCreate(key, false);
}
