import fc from "fast-check";
import { expect, it } from "vitest";
import { classifyNodeError, isRateLimit, type NodeErrorKind, revertDataOf } from "./node-errors.js";
import {
  FAULT_WORDINGS,
  LIMIT_WORDINGS,
  REVERT_WORDINGS,
  SEND_WORDINGS,
  UNSUPPORTED_WORDINGS,
} from "./node-wordings.js";

/** Answers as each implementation words them (copied from their answers, not made up for the table). */
const ANSWERS: [from: string, message: string, kind: NodeErrorKind, code?: number, data?: unknown][] = [
  ["geth", "already known", "already_known", -32000],
  ["geth", "nonce too low: address 0xabc, tx: 3 state: 5", "nonce_too_low", -32000],
  ["geth", "nonce too high: address 0xabc, tx: 9 state: 5", "nonce_too_high", -32000],
  ["geth", "replacement transaction underpriced", "replacement_underpriced", -32000],
  ["geth", "transaction underpriced: tip needed 1, tip permitted 0", "underpriced", -32000],
  [
    "geth",
    "insufficient funds for gas * price + value: address 0xabc have 0 want 21000",
    "insufficient_funds",
    -32000,
  ],
  [
    "geth",
    "max fee per gas less than block base fee: address 0xabc, maxFeePerGas: 1, baseFee: 7",
    "underpriced",
    -32000,
  ],
  ["geth", "execution reverted: not owner", "reverted", 3, "0x08c379a0"],
  ["geth", "txpool is full", "fault", -32000],
  ["geth", "intrinsic gas too low: gas 20000, minimum needed 21000", "other", -32000],
  ["reth", "nonce too low: next nonce 5, tx nonce 3", "nonce_too_low", -32003],
  ["reth", "insufficient funds for gas * price + value: have 0 want 21000", "insufficient_funds", -32003],
  ["reth", "transaction already exists in the pool", "already_known", -32003],
  ["Erigon", "ALREADY_EXISTS: already known", "already_known", -32000],
  ["Erigon", "fee too low", "underpriced", -32000],
  ["Nethermind", "OldNonce, Current nonce: 5, nonce of rejected tx: 3", "nonce_too_low", -32010],
  ["Nethermind", "NonceGap, Future nonce. Expected nonce: 5", "nonce_too_high", -32010],
  ["Nethermind", "AlreadyKnown", "already_known", -32010],
  ["Nethermind", "OwnNonceAlreadyUsed", "replacement_underpriced", -32010],
  [
    "Nethermind",
    "InsufficientFunds, Account balance: 0, cumulative cost: 21000",
    "insufficient_funds",
    -32010,
  ],
  ["Nethermind", "FeeTooLow, MaxFeePerGas too low. MaxFeePerGas: 1, BaseFee: 7", "underpriced", -32010],
  ["Nethermind", "VM execution error.", "reverted", -32015, "Reverted 0x08c379a0"],
  ["Besu", "Nonce too low", "nonce_too_low", -32001],
  ["Besu", "Known transaction", "already_known", -32000],
  ["Besu", "Upfront cost exceeds account balance", "insufficient_funds", -32004],
  ["Besu", "Transaction nonce is too distant from current sender nonce", "nonce_too_high", -32000],
  ["Besu", "Gas price below configured minimum gas price", "underpriced", -32009],
  ["Besu", "Execution reverted", "reverted", -32000, "0x08c379a0"],
  [
    "Hardhat",
    "Nonce too low. Expected nonce to be 1 but got 0. Note that transactions can't be queued when automining.",
    "nonce_too_low",
    -32000,
  ],
  [
    "Hardhat",
    "Nonce too high. Expected nonce to be 2 but got 7. Note that transactions can't be queued when automining.",
    "nonce_too_high",
    -32000,
  ],
  [
    "Hardhat",
    "Sender doesn't have enough funds to send tx. The max upfront cost is: 5000057750000000000 and the sender's balance is: 999962920267176999.",
    "insufficient_funds",
    -32000,
  ],
  [
    "Hardhat",
    "Error: VM Exception while processing transaction: reverted with reason string 'rate limit exceeded, timeout'",
    "reverted",
    -32603,
    { message: "reverted with reason string", data: "0x08c379a0" },
  ],
  ["Hardhat", "Method eth_protocolVersion is not supported", "unsupported", -32004],
  [
    "Hardhat",
    "Transaction maxFeePerGas (1) is too low for the next block, which has a baseFeePerGas of 670055867",
    "underpriced",
    -32000,
  ],
  [
    "Ganache",
    "the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 1",
    "nonce_too_low",
    -32000,
  ],
  [
    "Ganache",
    "the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 9",
    "nonce_too_high",
    -32000,
  ],
  ["Ganache", "insufficient funds for gas * price + value", "insufficient_funds", -32003],
  ["Ganache", "transaction underpriced", "underpriced", -32003],
  [
    "Ganache",
    "VM Exception while processing transaction: revert rate limit exceeded, timeout",
    "reverted",
    -32000,
    { hash: null, programCounter: 15, result: "0x08c379a0" },
  ],
  ["Ganache", "The method eth_blobBaseFee does not exist/is not available", "unsupported", -32601],
  ["anvil", "transaction already imported", "already_known", -32003],
  ["anvil", "nonce too low", "nonce_too_low", -32003],
  ["anvil", "execution reverted: custom error 0x12345678", "reverted", 3, "0x12345678"],
  ["Besu", "Transaction gas limit exceeds block gas limit", "limit", -32005],
  ["Besu", "Requested range exceeds maximum RPC range limit", "limit", -32005],
  ["Besu", "Number of requests exceeds max batch size", "limit", -32005],
  ["geth", "exceeds block gas limit", "limit", -32000],
  ["geth", "batch too large", "limit", -32600],
  ["geth", "query returned more than 10000 results", "limit", -32005],
  ["reth", "query exceeds max block range 100000", "limit", -32602],
  ["geth", "transaction type not supported", "other", -32000],
  ["Ganache", "Could not decode transaction: invalid RLP: remainder must be zero", "other", -32700],
  ["Ganache", "The method eth_simulateV1 does not exist/is not available", "unsupported", -32700],
  ["EIP-1474", "limit exceeded", "fault", -32005],
  ["hosted provider", "rate limit exceeded", "fault", -32005],
  ["hosted provider", "Too Many Requests", "fault", 429],
  ["hosted provider", "request timed out", "fault"],
];

it("reads every major implementation's wording (geth, reth, Erigon, Nethermind, Besu, Hardhat, Ganache, anvil)", () => {
  for (const [from, message, kind, code, data] of ANSWERS)
    expect(classifyNodeError(message, code, data), `${from}: ${message}`).toBe(kind);
});

it("every row of the wording table is exercised by an answer above (a row nobody meets is dead)", () => {
  const messages = ANSWERS.flatMap(([, message, , , data]) => [
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
