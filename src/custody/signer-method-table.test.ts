import { expect, it } from "vitest";
import { METHODS } from "../rpc/method-table.js";
import { SIGNER_METHODS } from "./signer-method-table.js";

it("every custody row of the method table has its handler row, and every handler row is a custody method", () => {
  const custody = METHODS.filter((spec) => spec.handler === "custody")
    .map((spec) => spec.name)
    .sort();
  expect(Object.keys(SIGNER_METHODS).sort()).toEqual(custody);
});

it("what a method needs follows from what it does: nothing that signs goes without an unlocked signer and the policy guard", () => {
  for (const [name, row] of Object.entries(SIGNER_METHODS)) {
    if (row.needs.includes("nonce")) expect(row.needs, name).toContain("policy");
    if (/^(eth_sign|personal_sign|eth_send|wallet_sendCalls)/.test(name))
      expect(row.needs, name).toEqual(expect.arrayContaining(["unlock", "policy"]));
  }
});
