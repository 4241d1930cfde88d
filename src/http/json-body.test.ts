/** The body parser's depth bound: refused exactly when a value nests deeper than MAX_JSON_DEPTH, whatever the text holds. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChaingateError } from "../errors/chaingate-error.js";
import { MAX_JSON_DEPTH, parseJsonText } from "./json-body.js";

/** Arrays and objects a value holds, counted as the text's brackets are (a scalar is 0). */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}

/** `inner` wrapped in `levels` arrays or objects, each chosen by `shapes`. */
function wrapped(inner: unknown, shapes: boolean[]): unknown {
  let value = inner;
  for (const asArray of shapes) value = asArray ? [1, value, "]"] : { k: value, "{": "[" };
  return value;
}

describe("parseJsonText's depth bound", () => {
  it("refuses a body exactly when it nests deeper than the bound, brackets in strings not counted", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }),
        fc.array(fc.boolean(), { minLength: MAX_JSON_DEPTH - 6, maxLength: MAX_JSON_DEPTH + 4 }),
        (inner, shapes) => {
          const value = wrapped(inner, shapes);
          const text = JSON.stringify(value);
          let outcome: "parsed" | number;
          try {
            parseJsonText(text);
            outcome = "parsed";
          } catch (error) {
            outcome = (error as ChaingateError).rpcCode;
          }
          expect(outcome).toBe(depthOf(value) > MAX_JSON_DEPTH ? -32700 : "parsed");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("holds at the bound itself and one past it, in arrays and in objects", () => {
    const arrays = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const objects = (n: number) => `${'{"a":'.repeat(n - 1)}{}${"}".repeat(n - 1)}`;
    expect(parseJsonText(arrays(MAX_JSON_DEPTH))).toBeDefined();
    expect(parseJsonText(objects(MAX_JSON_DEPTH))).toBeDefined();
    expect(() => parseJsonText(arrays(MAX_JSON_DEPTH + 1))).toThrow(/nested deeper than 64/);
    expect(() => parseJsonText(objects(MAX_JSON_DEPTH + 1))).toThrow(/nested deeper than 64/);
    // Far deeper than any stack a recursive parser would have: refused, not a crash.
    expect(() => parseJsonText(arrays(200_000))).toThrow(/nested deeper than 64/);
  });
});
