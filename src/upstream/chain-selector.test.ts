import fc from "fast-check";
import { expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { parseChainSelector } from "./chain-registry.js";

it("reads a chain id written in decimal or 0x hex, as a string, a number or a repeated query value", () => {
  // At most 15 decimal digits: every chain id in use is far below, and the parser stays bounded.
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 999_999_999_999_999 }), (id) => {
      expect(parseChainSelector(String(id), "chain_id")).toBe(id);
      expect(parseChainSelector(`0x${id.toString(16)}`, "chain_id")).toBe(id);
      expect(parseChainSelector(` ${id} `, "chain_id")).toBe(id);
      expect(parseChainSelector(id, "chain_id")).toBe(id);
      expect(parseChainSelector([String(id), "7"], "chain_id")).toBe(id);
    }),
  );
  expect(parseChainSelector(undefined, "chain_id")).toBeUndefined();
  expect(parseChainSelector("", "chain_id")).toBeUndefined();
});

it("anything else is INVALID_REQUEST naming the field, never an exception of another kind", () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.double(), fc.object(), fc.boolean()), (raw) => {
      try {
        const id = parseChainSelector(raw, "chain_id");
        expect(id === undefined || (Number.isSafeInteger(id) && id > 0)).toBe(true);
      } catch (error) {
        expect(error).toBeInstanceOf(ChaingateError);
        expect((error as ChaingateError).code).toBe("INVALID_REQUEST");
        expect((error as ChaingateError).message).toContain("chain_id");
      }
    }),
  );
  for (const bad of ["0", "-1", "0x", "1e3", "0x1g", "9".repeat(16), "1.5"]) {
    expect(() => parseChainSelector(bad, "chain_id"), bad).toThrow(ChaingateError);
  }
});
