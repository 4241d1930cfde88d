import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { METHODS, METHODS_BY_NAME } from "./method-table.js";
import { compileParams } from "./validate-params.js";

const hexChars = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), minLength: min, maxLength: max });
const address = hexChars(40, 40).map((h) => `0x${h}`);
const hash = hexChars(64, 64).map((h) => `0x${h}`);
const quantity = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }).map((n) => `0x${n.toString(16)}`);
/** Block numbers as nodes read them: signed 64-bit. */
const MAX_BLOCK = (1n << 63n) - 1n;
const blockNumber = fc.bigInt({ min: 0n, max: MAX_BLOCK }).map((n) => `0x${n.toString(16)}`);
const blockTag = fc.constantFrom("latest", "earliest", "pending", "safe", "finalized");

const validate = (name: string) => compileParams(METHODS_BY_NAME.get(name)!);

function rejection(fn: () => unknown): ChaingateError | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (error instanceof ChaingateError) return error;
    throw error;
  }
}

describe("parameter validation", () => {
  it("accepts every well-formed eth_getBalance call and fills the block default", () => {
    const check = validate("eth_getBalance");
    fc.assert(
      fc.property(address, fc.option(fc.oneof(blockNumber, blockTag, hash), { nil: undefined }), (a, b) => {
        const out = check(b === undefined ? [a] : [a, b]);
        expect(out).toEqual([a, b ?? "latest"]);
      }),
    );
  });

  it("rejects malformed addresses with -32602 and says which param and shape", () => {
    const check = validate("eth_getBalance");
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/^0x[0-9a-fA-F]{40}$/.test(s)),
        (bad) => {
          const error = rejection(() => check([bad, "latest"]));
          expect(error?.rpcCode).toBe(-32602);
          expect(error?.message).toContain("params[0] (address)");
          expect(error?.message).toContain("[address, block?]");
        },
      ),
    );
  });

  it("refuses a block number past 64 bits with chaingate's error, naming the limit, before any node sees it", () => {
    for (const name of ["eth_getBalance", "eth_getBlockByNumber"]) {
      const check = validate(name);
      fc.assert(
        // 64 hex digits read as a block hash (EIP-1898), which is valid.
        fc.property(
          quantity.filter((q) => q.length < 66),
          (n) => {
            const params = name === "eth_getBalance" ? [`0x${"1".repeat(40)}`, n] : [n];
            const error = rejection(() => check(params));
            expect(error === undefined).toBe(BigInt(n) <= MAX_BLOCK);
            if (error) {
              expect(error.rpcCode).toBe(-32602);
              expect(error.code).toBe("INVALID_PARAMS");
            }
          },
        ),
      );
      expect(
        rejection(() =>
          check(
            name === "eth_getBalance"
              ? [`0x${"1".repeat(40)}`, "0x8000000000000000"]
              : ["0x8000000000000000"],
          ),
        )?.message,
      ).toContain("0x7fffffffffffffff");
    }
  });

  it("a closed list of values is named in full when the value is not one of them", () => {
    const check = validate("eth_getBlockByNumber");
    const error = rejection(() => check(["newest"]));
    expect(error?.message).toContain('got "newest"');
    expect(error?.message).toContain('"latest"');
  });

  it("rejects quantities with leading zeros, as nodes do", () => {
    const check = validate("eth_getBlockByNumber");
    fc.assert(
      fc.property(hexChars(1, 10), (digits) => {
        const error = rejection(() => check([`0x0${digits}`]));
        expect(error?.rpcCode).toBe(-32602);
      }),
    );
  });

  it("never throws anything but a -32602 ChaingateError, for any params of any method", () => {
    const validators = METHODS.map((m) => compileParams(m));
    fc.assert(
      fc.property(fc.nat(validators.length - 1), fc.jsonValue({ maxDepth: 4 }), (i, params) => {
        try {
          const out = validators[i]!(params);
          expect(Array.isArray(out)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(ChaingateError);
          expect((error as ChaingateError).rpcCode).toBe(-32602);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("accepts log filters the standard allows and rejects fromBlock after toBlock", () => {
    const check = validate("eth_getLogs");
    const topic = fc.oneof(
      fc.constant(null),
      hash,
      fc.array(fc.oneof(hash, fc.constant(null)), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            address: fc.oneof(address, fc.array(address, { maxLength: 3 })),
            topics: fc.array(topic, { maxLength: 4 }),
          },
          { requiredKeys: [] },
        ),
        (filter) => {
          expect(check([filter])).toEqual([filter]);
        },
      ),
    );
    expect(rejection(() => check([{ fromBlock: "0x10", toBlock: "0x2" }]))?.message).toMatch(/after toBlock/);
    expect(rejection(() => check([{ topics: [null, null, null, null, null] }]))?.rpcCode).toBe(-32602);
  });
});
