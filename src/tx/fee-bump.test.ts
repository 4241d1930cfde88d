import fc from "fast-check";
import { expect, it } from "vitest";
import { bump, replacementFees } from "./fee-bump.js";

const GWEI = 1_000_000_000n;
const wei = fc.bigInt({ min: 1n, max: 10_000n * GWEI });
/** A tip is a share of the max fee (never above it). */
const percent = fc.bigInt({ min: 0n, max: 100n });
const dynamicRow = (maxFee: bigint, tip: bigint) => ({
  max_fee_per_gas: maxFee.toString(),
  max_priority_fee_per_gas: tip.toString(),
  gas_price: null,
});

it("a replacement raises both EIP-1559 fees by more than the 10% nodes require, and follows today's fees up", () => {
  fc.assert(
    fc.property(wei, percent, wei, wei, (oldMax, tipPercent, nowMax, nowTip) => {
      const oldTip = (oldMax * tipPercent) / 100n;
      const fees = replacementFees(
        dynamicRow(oldMax, oldTip),
        { type: "eip1559", maxFeePerGas: nowMax, maxPriorityFeePerGas: nowTip, baseFee: 0n },
        1_000_000n * GWEI,
      );
      expect(fees?.type).toBe("eip1559");
      if (fees?.type !== "eip1559") return;
      expect(fees.maxFeePerGas * 10n).toBeGreaterThan(oldMax * 11n);
      expect(fees.maxPriorityFeePerGas * 10n).toBeGreaterThan(oldTip * 11n);
      expect(fees.maxFeePerGas).toBeGreaterThanOrEqual(nowMax);
      expect(fees.maxPriorityFeePerGas).toBeGreaterThanOrEqual(nowTip);
      expect(fees.maxPriorityFeePerGas).toBeLessThanOrEqual(fees.maxFeePerGas);
    }),
  );
});

it("never offers more than the cap: a replacement the cap cannot pay for is not made", () => {
  fc.assert(
    fc.property(wei, percent, wei, (oldMax, tipPercent, cap) => {
      const oldTip = (oldMax * tipPercent) / 100n;
      const fees = replacementFees(
        dynamicRow(oldMax, oldTip),
        { type: "eip1559", maxFeePerGas: 0n, maxPriorityFeePerGas: 0n, baseFee: 0n },
        cap,
      );
      if (bump(oldMax) > cap) expect(fees).toBeUndefined();
      else expect(fees?.type === "eip1559" && fees.maxFeePerGas <= cap).toBe(true);
    }),
  );
});

it("legacy transactions get a legacy price, bumped, capped", () => {
  const row = { max_fee_per_gas: null, max_priority_fee_per_gas: null, gas_price: (8n * GWEI).toString() };
  expect(replacementFees(row, { type: "legacy", gasPrice: GWEI }, 100n * GWEI)).toEqual({
    type: "legacy",
    gasPrice: 9n * GWEI + 1n,
  });
  expect(replacementFees(row, { type: "legacy", gasPrice: 20n * GWEI }, 100n * GWEI)).toEqual({
    type: "legacy",
    gasPrice: 20n * GWEI,
  });
  expect(replacementFees(row, { type: "legacy", gasPrice: GWEI }, 9n * GWEI)).toBeUndefined();
});
