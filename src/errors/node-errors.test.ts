import fc from "fast-check";
import { expect, it } from "vitest";
import { classifyNodeError } from "./node-errors.js";

it("reads the wordings of the common nodes alike", () => {
  const cases: [string, ReturnType<typeof classifyNodeError>][] = [
    ["already known", "already_known"], // geth
    ["Known transaction: 0xabc", "already_known"], // older geth
    ["transaction already imported", "already_known"], // anvil
    ["Transaction with the same hash was already imported.", "already_known"], // Nethermind
    ["nonce too low: next nonce 5, tx nonce 3", "nonce_conflict"], // geth
    ["Nonce too low", "nonce_conflict"], // anvil
    ["replacement transaction underpriced", "nonce_conflict"],
    ["insufficient funds for gas * price + value: balance 0, tx cost 21000", "insufficient_funds"],
    ["execution reverted: not owner", "reverted"],
    ["VM Exception while processing transaction: revert", "reverted"],
    ["rate limit exceeded", "fault"], // Infura, Alchemy
    ["request timed out", "fault"],
    ["intrinsic gas too low", "other"],
  ];
  for (const [message, kind] of cases) expect(classifyNodeError(message), message).toBe(kind);
});

it("reads codes before words: a revert (3) whatever its reason says, -32005 and 429 as faults", () => {
  expect(classifyNodeError("execution reverted: rate limit reached", 3)).toBe("reverted");
  expect(classifyNodeError("limit exceeded", -32005)).toBe("fault");
  expect(classifyNodeError("Too Many Requests", 429)).toBe("fault");
  expect(classifyNodeError("invalid argument 0", -32602)).toBe("other");
});

it("never throws, and a message without any of the words is 'other'", () => {
  fc.assert(
    fc.property(fc.string(), (message) => {
      const kind = classifyNodeError(message);
      if (
        !/known|imported|exists|nonce|used|underpriced|insufficient|balance|revert|limit|many|capacity|unavailable|time/i.test(
          message,
        )
      ) {
        expect(kind).toBe("other");
      }
    }),
  );
});
