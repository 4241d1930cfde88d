/** The fees of a fee-bump replacement: a pure rule, so it is tested without a chain. */
import type { TransactionsTable } from "../store/schema.js";
import type { Fees } from "./fee-oracle.js";

/** Raises a fee by 12.5% (nodes ask for at least 10% to replace a pending transaction). */
export const bump = (fee: bigint): bigint => (fee * 9n) / 8n + 1n;
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * Fees for replacing `row`: each raised by at least 12.5%, at least what the chain asks today, never
 * above `cap`. Undefined when the cap leaves no valid replacement (the transaction is reported stuck).
 */
export function replacementFees(
  row: Pick<TransactionsTable, "max_fee_per_gas" | "max_priority_fee_per_gas" | "gas_price">,
  current: Fees,
  cap: bigint,
): Fees | undefined {
  if (row.max_fee_per_gas !== null && row.max_priority_fee_per_gas !== null) {
    const oldMax = BigInt(row.max_fee_per_gas);
    const oldTip = BigInt(row.max_priority_fee_per_gas);
    const tip = max(bump(oldTip), current.type === "eip1559" ? current.maxPriorityFeePerGas : 0n);
    let maxFee = max(max(bump(oldMax), current.type === "eip1559" ? current.maxFeePerGas : 0n), tip);
    if (maxFee > cap) maxFee = cap;
    if (maxFee < bump(oldMax) || tip > maxFee) return undefined;
    const baseFee = current.type === "eip1559" ? current.baseFee : 0n;
    return { type: "eip1559", maxFeePerGas: maxFee, maxPriorityFeePerGas: tip, baseFee };
  }
  const oldPrice = BigInt(row.gas_price ?? "0");
  const price = max(bump(oldPrice), current.type === "legacy" ? current.gasPrice : 0n);
  return price > cap ? undefined : { type: "legacy", gasPrice: price };
}
