import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { NodeRpcError } from "../errors/rpc-errors.js";
import { parseJsonText } from "../http/json-body.js";
import { parseChainSelector } from "../upstream/chain-registry.js";
import { errorText, readNativeRequest, readRpcRequest, resultAnswer, resultText } from "./envelope.js";
import { JsonText } from "./response-cache.js";

function outcome(fn: () => unknown): "ok" | number {
  try {
    fn();
    return "ok";
  } catch (error) {
    if (error instanceof ChaingateError) return error.rpcCode;
    throw error;
  }
}

describe("envelopes", () => {
  it("a cached answer's envelope is resultText's, with its exact UTF-8 length", () => {
    fc.assert(
      fc.property(
        // Any double: -0, 1e21 and the Infinity a JSON id of 1e400 parses to are written as JSON writes them.
        fc.oneof(
          fc.string({ unit: "grapheme" }),
          fc.integer(),
          fc.double(),
          fc.constantFrom(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, -0, 1e21),
          fc.constant(null),
        ),
        fc.jsonValue(),
        (id, result) => {
          const json = new JsonText(JSON.stringify(result));
          const answer = resultAnswer(id, json);
          expect(answer.text).toBe(resultText(id, json));
          expect(answer.byteLength).toBe(Buffer.byteLength(answer.text));
          // Counted once and kept: a second envelope of the same answer agrees.
          expect(resultAnswer(id, json).byteLength).toBe(answer.byteLength);
        },
      ),
    );
  });

  it("reading any JSON body either succeeds or fails with -32600, never otherwise", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => {
        expect(["ok", -32600]).toContain(outcome(() => readNativeRequest(body, "eth_blockNumber")));
        expect(["ok", -32600]).toContain(outcome(() => readRpcRequest(body)));
      }),
      { numRuns: 2000 },
    );
  });

  it("a body is empty exactly when trimming leaves nothing, whatever its whitespace", () => {
    const unit = fc.constantFrom(
      " ",
      "\t",
      "\n",
      "\r",
      "\v",
      "\f",
      "\u00a0",
      "\ufeff",
      "\u2028",
      "\u3000",
      "\u180e",
      "1",
    );
    fc.assert(
      fc.property(fc.string({ unit }), (text) => {
        if (text.trim() === "") {
          expect(parseJsonText(text)).toBeUndefined();
          return;
        }
        // Anything else is a value or a parse error, never "no body".
        let value: unknown;
        try {
          value = parseJsonText(text);
        } catch (error) {
          expect((error as ChaingateError).rpcCode).toBe(-32700);
          return;
        }
        expect(value).not.toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  it("parsing any text either yields JSON or fails with -32700", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        expect(["ok", -32700]).toContain(outcome(() => parseJsonText(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it("echoes any valid id and writes valid JSON", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), fc.jsonValue(), (id, result) => {
        const parsed = JSON.parse(resultText(id, result)) as { id: unknown; jsonrpc: string };
        expect(parsed.id).toEqual(id);
        expect(parsed.jsonrpc).toBe("2.0");
        expect(JSON.parse(errorText(id, new Error("boom")))).toEqual({
          jsonrpc: "2.0",
          id,
          error: { code: -32603, message: "Internal error", data: { code: "INTERNAL", retryable: false } },
        });
      }),
    );
  });

  it("passes a node's error through unchanged, data included", () => {
    const text = errorText(4, new NodeRpcError(3, "execution reverted", "0xdeadbeef"));
    expect(JSON.parse(text)).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: { code: 3, message: "execution reverted", data: "0xdeadbeef" },
    });
  });

  it("a chain selector is a positive decimal or hex id, or an invalid request", () => {
    expect(parseChainSelector("1002", "chain_id")).toBe(1002);
    expect(parseChainSelector("0x3ea", "chain_id")).toBe(1002);
    expect(parseChainSelector(undefined, "chain_id")).toBeUndefined();
    fc.assert(
      fc.property(fc.string(), (raw) => {
        const result = outcome(() => parseChainSelector(raw, "chain_id"));
        expect(["ok", -32600]).toContain(result);
      }),
    );
  });
});
