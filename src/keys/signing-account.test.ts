import fc from "fast-check";
import type { Hex, TransactionSerializable } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect, it } from "vitest";
import { nativeSecp256k1, signingAccount } from "./signing-account.js";

const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`;
const privateKey = fc
  .bigInt({ min: 1n, max: ORDER - 1n })
  .map((k) => `0x${k.toString(16).padStart(64, "0")}` as Hex);
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map(hexOf);
const data = fc.uint8Array({ maxLength: 300 }).map(hexOf);
const uint = (bits: number) => fc.bigInt({ min: 0n, max: 2n ** BigInt(bits) - 1n });

/** What every transaction type has. */
const common = {
  chainId: fc.integer({ min: 1, max: 2 ** 32 }),
  nonce: fc.integer({ min: 0, max: 2 ** 40 }),
  gas: uint(64),
  to: fc.option(address, { nil: undefined }),
  value: uint(256),
  data,
};
const accessList = fc.array(
  fc.record({
    address,
    storageKeys: fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }).map(hexOf), { maxLength: 3 }),
  }),
  { maxLength: 3 },
);

const transaction: fc.Arbitrary<TransactionSerializable> = fc.oneof(
  fc
    .record({
      ...common,
      type: fc.constant("eip1559" as const),
      maxFeePerGas: uint(128),
      maxPriorityFeePerGas: uint(64),
      accessList,
    })
    .map((tx) => ({ ...tx, maxPriorityFeePerGas: tx.maxPriorityFeePerGas % (tx.maxFeePerGas + 1n) })),
  fc.record({ ...common, type: fc.constant("legacy" as const), gasPrice: uint(128) }),
  fc.record({
    ...common,
    type: fc.constant("eip2930" as const),
    gasPrice: uint(128),
    accessList: fc.constant([]),
  }),
);

it("libsecp256k1 loads from the prebuilt binary on linux-x64 (the machines chaingate is tested on)", () => {
  if (process.platform === "linux" && process.arch === "x64") expect(nativeSecp256k1()).toBeDefined();
});

it("the address and public key made natively are viem's, for any key", () => {
  fc.assert(
    fc.property(privateKey, (key) => {
      const theirs = privateKeyToAccount(key);
      const ours = signingAccount(key);
      expect(ours.address).toBe(theirs.address);
      expect(ours.publicKey).toBe(theirs.publicKey);
    }),
    { numRuns: 300 },
  );
});

it("a key that is not a secp256k1 scalar is refused natively, as viem refuses it", () => {
  for (const key of [0n, ORDER, ORDER + 1n, 2n ** 256n - 1n]) {
    const hex = `0x${key.toString(16).padStart(64, "0")}` as Hex;
    expect(() => privateKeyToAccount(hex)).toThrow();
    expect(() => signingAccount(hex)).toThrow();
  }
});

it("native signing gives byte-identical transactions to viem's, for any key and any transaction", async () => {
  await fc.assert(
    fc.asyncProperty(privateKey, transaction, async (key, tx) => {
      const viem = await privateKeyToAccount(key).signTransaction(tx);
      expect(await signingAccount(key).signTransaction(tx)).toBe(viem);
    }),
    { numRuns: 300 },
  );
});

/** anvil's first dev key, and a transfer of it. */
const KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as const;
const transfer = (more: Partial<TransactionSerializable> = {}) =>
  ({
    type: "eip1559",
    chainId: 1001,
    nonce: 0,
    gas: 21_000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
    to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    value: 1n,
    ...more,
  }) as TransactionSerializable;

it("without the addon the account is viem's own, same address and same bytes", async () => {
  const key = KEY;
  const fallback = signingAccount(key, undefined);
  const tx = transfer({ to: fallback.address });
  expect(fallback.address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
  expect(await fallback.signTransaction(tx)).toBe(await signingAccount(key).signTransaction(tx));
  expect(await fallback.signMessage({ message: "hi" })).toBe(
    await signingAccount(key).signMessage({ message: "hi" }),
  );
});

it("a field that is not hex bytes is refused, never signed with what the buffer held", async () => {
  const tx = transfer({ data: "0x12zz34" as Hex });
  await expect(signingAccount(KEY).signTransaction(tx)).rejects.toThrow(/not hex bytes/);
});

it("odd-length data is read with its leading zero, as viem reads it", async () => {
  for (const tx of [
    transfer({ data: "0x123" }),
    { type: "legacy", chainId: 1001, nonce: 3, gas: 50_000n, gasPrice: 7n, data: "0xabcde" } as const,
  ])
    expect(await signingAccount(KEY).signTransaction(tx)).toBe(
      await privateKeyToAccount(KEY).signTransaction(tx),
    );
});
