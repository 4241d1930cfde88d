import { readFileSync } from "node:fs";
import { toHex } from "viem";
import { describe, expect, it } from "vitest";
import { native } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT } from "../test-support/evm-fixtures.js";
import { openRpcValidator, SPEC_PATH } from "../test-support/openrpc.js";
import { suiteRuntime } from "../test-support/test-runtime.js";
import { METHODS_BY_NAME } from "./method-table.js";

const spec = openRpcValidator();

describe("the execution-apis rows chaingate passes through, checked against the standard's schemas", () => {
  const rt = suiteRuntime();

  it("every method of the execution-apis document is a row of the method table", () => {
    const doc = JSON.parse(readFileSync(SPEC_PATH, "utf8")) as { methods: { name: string }[] };
    expect(doc.methods.length).toBeGreaterThan(40);
    expect(doc.methods.map((m) => m.name).filter((name) => !METHODS_BY_NAME.has(name))).toEqual([]);
  });

  it("eth_baseFee (anvil lacks it: answered from eth_feeHistory), eth_coinbase and eth_config answer in the standard's shapes", async () => {
    for (const method of ["eth_baseFee", "eth_coinbase", "eth_config"]) {
      const answer = await native(rt, method, []);
      expect(answer.error, `${method}: ${JSON.stringify(answer.error)}`).toBeUndefined();
      expect(spec.check(method, answer.result), method).toBeNull();
    }
  });

  it("eth_getStorageValues takes short keys (padded for the node) and answers one value per key", async () => {
    const answer = await native(rt, "eth_getStorageValues", [{ [DEV_ACCOUNT]: ["0x0", "0x1"] }, "latest"]);
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    expect(spec.check("eth_getStorageValues", answer.result)).toBeNull();
    const values = Object.values(answer.result as Record<string, string[]>)[0]!;
    expect(values).toHaveLength(2);
    const bad = await native(rt, "eth_getStorageValues", [{ [DEV_ACCOUNT]: ["0xzz"] }]);
    expect(bad.error?.code).toBe(-32602);
    // A key that is not an address (found by the hostile-input property test) is refused, not an internal error.
    const notAddress = await native(rt, "eth_getStorageValues", [{ "": false }]);
    expect(notAddress.error?.code).toBe(-32602);
    // At most 1,024 slots in one call, however they are spread over addresses.
    const slots = (n: number) => Array.from({ length: n }, (_, i) => toHex(i));
    const tooMany = await native(rt, "eth_getStorageValues", [
      { [DEV_ACCOUNT]: slots(600), "0x70997970C51812dc3A010C7d01b50e0d17dc79C8": slots(425) },
    ]);
    expect(tooMany.error?.code).toBe(-32602);
    expect(tooMany.error?.message).toMatch(/1025 slots; at most 1024/);
  });

  it("a method the node lacks and chaingate cannot derive is the node's method-not-found, named", async () => {
    const answer = await native(rt, "eth_capabilities", []);
    expect(answer.error?.code).toBe(-32601);
  });
});
