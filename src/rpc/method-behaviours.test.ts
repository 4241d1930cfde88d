/** The per-method rules are whole: each names a row, and the traits the pool goes by say what the methods are. */
import { expect, it } from "vitest";
import { BEHAVIOURS } from "./method-behaviours.js";
import { METHODS, METHODS_BY_NAME, upstreamTraitsOf } from "./method-table.js";

it("every rule names a row of the table, and a method's own answer is only for node methods", () => {
  for (const [name, behaviour] of Object.entries(BEHAVIOURS)) {
    const row = METHODS_BY_NAME.get(name);
    expect(row, name).toBeDefined();
    if (behaviour.answer || behaviour.whenUnsupported || behaviour.result)
      expect(row?.handler, name).toBe("upstream");
    if (behaviour.signatures) expect(row?.handler, name).toBe("custody");
  }
});

it("every method that sends a transaction is a send (never repeated after a drop), and no read is", () => {
  const sends = METHODS.filter((m) => /^eth_send/.test(m.name)).map((m) => m.name);
  expect(sends.length).toBeGreaterThanOrEqual(4);
  for (const name of sends) expect(upstreamTraitsOf(name).send, name).toBe(true);
  for (const read of ["eth_call", "eth_getBalance", "eth_getLogs", "eth_getTransactionReceipt"])
    expect(upstreamTraitsOf(read).send, read).toBe(false);
  // A method outside the table (a devnet's anvil_setBalance) is plain.
  expect(upstreamTraitsOf("anvil_setBalance")).toEqual({
    behind: false,
    send: false,
    shared: false,
    pure: false,
  });
  expect(upstreamTraitsOf("eth_getTransactionReceipt").behind).toBe(true);
  expect(upstreamTraitsOf("eth_getBalance").shared).toBe(true);
});

it("only custody methods are unsigned, and only those that neither sign nor derive a key", () => {
  const unsigned = METHODS.filter((m) => m.traits.has("unsigned"));
  for (const m of unsigned) expect(m.handler, m.name).toBe("custody");
  expect(unsigned.map((m) => m.name)).not.toContain("eth_sendTransaction");
  expect(unsigned.map((m) => m.name)).toContain("eth_accounts");
});
