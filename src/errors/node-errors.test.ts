import fc from "fast-check";
import { expect, it } from "vitest";
import { NODE_WORDING_SAMPLES } from "../test-support/node-wording-samples.js";
import { classifyNodeError, isRateLimit, revertDataOf } from "./node-errors.js";
import {
  FAULT_WORDINGS,
  LIMIT_WORDINGS,
  REVERT_WORDINGS,
  SEND_WORDINGS,
  UNSUPPORTED_WORDINGS,
} from "./node-wordings.js";

it("reads every major implementation's wording (geth, reth, Erigon, Nethermind, Besu, Hardhat, Ganache, anvil)", () => {
  for (const [from, message, kind, code, data] of NODE_WORDING_SAMPLES)
    expect(classifyNodeError(message, code, data), `${from}: ${message}`).toBe(kind);
});

it("every row of the wording table is exercised by an answer above (a row nobody meets is dead)", () => {
  const messages = NODE_WORDING_SAMPLES.flatMap(([, message, , , data]) => [
    message,
    ...(typeof data === "string" ? [data] : []),
  ]);
  for (const row of [
    ...REVERT_WORDINGS,
    ...SEND_WORDINGS,
    ...LIMIT_WORDINGS,
    ...UNSUPPORTED_WORDINGS,
    ...FAULT_WORDINGS,
  ])
    expect(
      messages.some((m) => row.pattern.test(m)),
      `${row.from}: ${row.pattern}`,
    ).toBe(true);
});

it("a revert is a revert whatever its reason says, and wherever the node put it: never a fault", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(
        "rate limit exceeded",
        "timeout",
        "too many requests",
        "nonce too low",
        "insufficient funds",
      ),
      (reason) => {
        expect(classifyNodeError(`execution reverted: ${reason}`, 3)).toBe("reverted");
        expect(classifyNodeError(`VM Exception while processing transaction: revert ${reason}`, -32000)).toBe(
          "reverted",
        );
        expect(
          classifyNodeError(
            `Error: VM Exception while processing transaction: reverted with reason string '${reason}'`,
            -32603,
          ),
        ).toBe("reverted");
        expect(classifyNodeError("Execution reverted", -32000, `0x08c379a0${reason.length}`)).toBe(
          "reverted",
        );
      },
    ),
  );
});

it("reads codes before words: a revert (3) whatever its reason says, -32005 and 429 as faults", () => {
  expect(classifyNodeError("execution reverted: rate limit reached", 3)).toBe("reverted");
  expect(classifyNodeError("limit exceeded", -32005)).toBe("fault");
  expect(classifyNodeError("Too Many Requests", 429)).toBe("fault");
  expect(classifyNodeError("invalid argument 0", -32602)).toBe("other");
  expect(classifyNodeError("whatever", -32601)).toBe("unsupported");
});

it("splits -32005 by its words: a rate limit is a fault that ran nothing, a request too large is the caller's", () => {
  expect(classifyNodeError("Requested range exceeds maximum RPC range limit", -32005)).toBe("limit");
  expect(classifyNodeError("Transaction gas limit exceeds block gas limit", -32005)).toBe("limit");
  expect(isRateLimit("Transaction gas limit exceeds block gas limit", -32005)).toBe(false);
  expect(isRateLimit("limit exceeded", -32005)).toBe(true);
  expect(isRateLimit("Too Many Requests", 429)).toBe(true);
  expect(isRateLimit("daily request rate exceeded", -32000)).toBe(true);
  expect(isRateLimit("request timed out", -32000)).toBe(false);
});

it("finds revert data wherever a node put it", () => {
  expect(revertDataOf("0x08c379a0")).toBe("0x08c379a0");
  expect(revertDataOf({ message: "x", data: "0xdeadbeef" })).toBe("0xdeadbeef"); // Hardhat
  expect(revertDataOf({ hash: null, programCounter: 15, result: "0xdeadbeef", reason: "x" })).toBe(
    "0xdeadbeef",
  ); // Ganache
  expect(revertDataOf("Reverted 0xdeadbeef")).toBe("0xdeadbeef"); // Nethermind
  expect(revertDataOf("0x")).toBe("0x");
  expect(revertDataOf("not hex")).toBeUndefined();
  expect(revertDataOf({ data: { data: { data: { data: "0x00" } } } })).toBeUndefined();
});

it("never throws, and a message without any of the words is 'other'", () => {
  fc.assert(
    fc.property(
      fc.string(),
      fc.option(fc.integer({ min: -32700, max: 4 })),
      fc.anything(),
      (message, code, data) => {
        const kind = classifyNodeError(message, code ?? undefined, data);
        if (
          code === null &&
          typeof data !== "string" &&
          !/known|imported|exists|exceed|range|batch|blocks|results|logs|response|decode|type|nonce|used|underpriced|insufficient|balance|revert|limit|many|capacity|unavailable|time|VM|method|support|fee|funds|upfront|distant|future|gap|price|later|overload|full|pool/i.test(
            message,
          )
        ) {
          expect(kind).toBe("other");
        }
      },
    ),
  );
});
