/** signOperation's transaction of each type, signed by a real key and read back from its bytes. */
import fc from "fast-check";
import { type Hex, keccak256, parseTransaction, recoverTransactionAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expect, it } from "vitest";
import type { Chain } from "../upstream/chain-registry.js";
import type { Fees } from "./fee-oracle.js";
import { type SignedOperation, signOperation } from "./signed-operation.js";

const account = privateKeyToAccount(generatePrivateKey());
const delegate = privateKeyToAccount(generatePrivateKey());
const TO = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const chain = { chainId: 1001 } as Chain;
const dynamic: Fees = {
  type: "eip1559",
  maxFeePerGas: 50_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  baseFee: 0n,
};
const legacy: Fees = { type: "legacy", gasPrice: 20_000_000_000n };
const list = [{ address: TO as Hex, storageKeys: [keccak256("0x01")] }];

function operation(to: Hex | null, extra: Partial<SignedOperation> = {}): SignedOperation {
  return {
    chain,
    account,
    walletId: "wallet",
    addressIndex: 0,
    to,
    data: "0x1234",
    value: 7n,
    kind: "transfer",
    ...extra,
  };
}

it("signs each type with the fields it was given, and nothing it was not", async () => {
  const cases: { op: SignedOperation; fees: Fees; type: string; accessList: boolean }[] = [
    { op: operation(TO), fees: dynamic, type: "eip1559", accessList: false },
    { op: operation(TO, { accessList: list }), fees: dynamic, type: "eip1559", accessList: true },
    { op: operation(null), fees: dynamic, type: "eip1559", accessList: false },
    { op: operation(TO), fees: legacy, type: "legacy", accessList: false },
    { op: operation(null), fees: legacy, type: "legacy", accessList: false },
    { op: operation(TO, { accessList: list }), fees: legacy, type: "eip2930", accessList: true },
  ];
  for (const { op, fees, type, accessList } of cases) {
    const raw = await signOperation(op, 21_000n, fees, 5);
    const tx = parseTransaction(raw);
    expect(tx.type).toBe(type);
    expect(tx.chainId).toBe(1001);
    expect(tx.nonce).toBe(5);
    expect(tx.gas).toBe(21_000n);
    expect(tx.value).toBe(7n);
    expect(tx.data).toBe("0x1234");
    expect(tx.to?.toLowerCase()).toBe(op.to ?? undefined);
    if (accessList) expect(tx.accessList).toEqual(list);
    else expect(tx.accessList ?? []).toEqual([]);
    if (fees.type === "eip1559") {
      expect(tx.maxFeePerGas).toBe(fees.maxFeePerGas);
      expect(tx.maxPriorityFeePerGas).toBe(fees.maxPriorityFeePerGas);
    } else expect(tx.gasPrice).toBe(fees.gasPrice);
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(account.address);
  }
});

it("signs a type-4 transaction with the authorizations given, or the sender's own at the next nonce", async () => {
  const signed = await delegate.signAuthorization({ contractAddress: TO, chainId: 1001, nonce: 0 });
  const given = await signOperation(operation(TO), 60_000n, dynamic, 3, [
    { authority: delegate.address, authorization: signed },
  ]);
  const tx = parseTransaction(given);
  expect(tx.type).toBe("eip7702");
  expect(tx.authorizationList).toHaveLength(1);
  expect(tx.authorizationList?.[0]?.address.toLowerCase()).toBe(TO);

  const own = parseTransaction(
    await signOperation(
      operation(TO, { authorizations: { signed: [], self: { delegate: TO, chainId: 1001 } } }),
      60_000n,
      dynamic,
      3,
    ),
  );
  expect(own.type).toBe("eip7702");
  // The sender's own authorization is at N + 1: its nonce has moved past N when the list is read.
  expect(own.authorizationList?.[0]?.nonce).toBe(4);
});

it("any nonce, value and gas read back as signed", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.nat({ max: 2 ** 40 }),
      fc.bigInt({ min: 0n, max: 2n ** 128n }),
      fc.bigInt({ min: 21_000n, max: 30_000_000n }),
      async (nonce, value, gas) => {
        const tx = parseTransaction(await signOperation(operation(TO, { value }), gas, dynamic, nonce));
        expect(tx.nonce).toBe(nonce);
        expect(tx.value ?? 0n).toBe(value);
        expect(tx.gas).toBe(gas);
      },
    ),
    { numRuns: 50 },
  );
});
