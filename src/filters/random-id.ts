/** Random 128-bit ids as the standard's uint quantity: 0x-hex without leading zeros (clients validate this). */
import { randomBytes } from "node:crypto";

export function randomQuantityId(): string {
  for (;;) {
    const value = BigInt(`0x${randomBytes(16).toString("hex")}`);
    if (value !== 0n) return `0x${value.toString(16)}`;
  }
}
