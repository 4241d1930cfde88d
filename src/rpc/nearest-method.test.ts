import fc from "fast-check";
import { expect, it } from "vitest";
import { METHODS } from "./method-table.js";
import { nearestMethod } from "./nearest-method.js";

const NAMES = METHODS.map((m) => m.name);

it("names the method a near miss meant: another case, a letter off, two swapped; nothing for a far one", () => {
  expect(nearestMethod("eth_blocknumber", NAMES)).toBe("eth_blockNumber");
  expect(nearestMethod("ETH_GETBALANCE", NAMES)).toBe("eth_getBalance");
  expect(nearestMethod("eth_getBalanc", NAMES)).toBe("eth_getBalance");
  expect(nearestMethod("eth_chianId", NAMES)).toBe("eth_chainId");
  expect(nearestMethod("eth_sendRawTransactoin", NAMES)).toBe("eth_sendRawTransaction");
  expect(nearestMethod("hello", NAMES)).toBeUndefined();
  expect(nearestMethod("", NAMES)).toBeUndefined();
});

it("never throws, and answers only known names", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 60 }), (name) => {
      const found = nearestMethod(name, NAMES);
      if (found !== undefined) expect(NAMES).toContain(found);
    }),
  );
});
