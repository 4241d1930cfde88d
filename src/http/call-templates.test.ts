/** The kept calls of the read fast path: a body found again is the call it was, with its own id, whatever the text around it (property tests). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PlainCall } from "../rpc/dispatcher.js";
import { CallTemplates, idSpan } from "./call-templates.js";

const HASH = `0x${"ab".repeat(32)}`;

/** A call as the fast path would keep it (the templates look at nothing in it but its parameters). */
const plainOf = (params: unknown[]): PlainCall =>
  ({ method: "eth_getBlockByHash", checked: params, params }) as unknown as PlainCall;

/** Ids as clients write them, and ids no client writes but any may send. */
const anyId = fc.oneof(
  fc.integer(),
  fc.integer({ min: 0, max: 999 }),
  fc.constantFrom(0, -0, 1.5, 1e21, 2 ** 53 + 1, -(2 ** 60), 123456789012345, 1234567890123456),
  fc.string({ maxLength: 70 }),
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.constantFrom("", "a\\b", 'q"', "\u2028", "\u0000", "é"),
);

/** A body with `id` in it: the orders viem and ethers write, and shapes that put another `"id":` first. */
const bodyShapes: ((id: string, params: string) => string)[] = [
  (id, p) => `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByHash","params":${p}}`,
  (id, p) => `{"method":"eth_getBlockByHash","params":${p},"id":${id},"jsonrpc":"2.0"}`,
  (id, p) => `{"params":${p},"id":${id}}`,
  // The call's own id comes last: JSON keeps the last of two.
  (id, p) => `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByHash","params":${p},"id":7}`,
  // The first compact `"id":` is inside another value; the call's own is written with a space.
  (id, p) => `{"x":{"id":${id}},"jsonrpc":"2.0","id" :7,"method":"eth_getBlockByHash","params":${p}}`,
  (id, p) => `{"jsonrpc":"2.0","id" : 7,"method":"eth_getBlockByHash","params":${p},"y":[{"id":${id}}]}`,
  // A key that ends in `id`.
  (id, p) => `{"jsonrpc":"2.0","\\"id":${id},"id":8,"method":"eth_getBlockByHash","params":${p}}`,
  (id, p) => `{"jsonrpc":"2.0","id":${id} ,"method":"eth_getBlockByHash","params":${p}}`,
];
const paramsTexts = [`["${HASH}",false]`, `["${HASH}",true]`, "[]"];

describe("idSpan", () => {
  it('reads the value after the first compact "id": exactly as JSON does, or not at all (property)', () => {
    fc.assert(
      fc.property(anyId, fc.constantFrom(",", "}", " ,", "]"), (id, after) => {
        const text = `{"id":${JSON.stringify(id)}${after}`;
        const span = idSpan(text);
        if (span === undefined) return;
        expect(after === "," || after === "}").toBe(true);
        expect(span.id).toBe(JSON.parse(`{"id":${JSON.stringify(id)}}`).id);
        expect(text.slice(span.start, span.end)).toBe(JSON.stringify(id));
      }),
      { numRuns: 2000 },
    );
  });

  it("takes the plain ids clients send", () => {
    for (const id of [0, 1, 42, 123456789012345, -3, "1", "abc-DEF_9", "x".repeat(64)])
      expect(idSpan(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"m"}`)?.id).toBe(id);
    for (const text of ['{"id":01}', '{"id":1.5}', '{"id":1e3}', '{"id":"a\\"b"}', '{"id":null}', '{"id":']) {
      expect(idSpan(text)).toBeUndefined();
    }
  });
});

describe("CallTemplates", () => {
  it("a body found again is what parsing it gives, its id its own, whatever the shape (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...bodyShapes.keys()),
        fc.constantFrom(...paramsTexts),
        // The decoys' own ids (7, 8) often: only then does the first value look like the call's id.
        fc.oneof(fc.constantFrom(7, 8), anyId),
        anyId,
        (shape, paramsText, first, second) => {
          const templates = new CallTemplates();
          const make = (id: unknown) => bodyShapes[shape]!(JSON.stringify(id), paramsText);
          const learned = JSON.parse(make(first)) as { id: unknown; params: unknown[] };
          templates.learn(1, "/", make(first), learned.id, learned.params, plainOf(learned.params));
          const text = make(second);
          const found = templates.find(1, "/", text);
          const parsed = JSON.parse(text) as { id: unknown; params: unknown[] };
          if (found === undefined) return;
          expect(found.id).toBe(parsed.id);
          expect(found.params).toEqual(parsed.params);
          expect(found.plain.checked).toEqual(parsed.params);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("finds the calls viem and ethers make again with any plain id, in their scope only", () => {
    const templates = new CallTemplates();
    const params = [HASH, false];
    for (const shape of bodyShapes.slice(0, 3)) {
      const text = shape("1", JSON.stringify(params));
      templates.learn(1, "/", text, 1, params, plainOf(params));
      for (const id of [2, 9007199254740, "req-7", 0]) {
        const again = shape(JSON.stringify(id), JSON.stringify(params));
        expect(templates.find(1, "/", again)).toMatchObject({ id, params });
        expect(templates.find(1, "/eth_getBlockByHash", again)).toBeUndefined();
        expect(templates.find(5, "/", again)).toBeUndefined();
      }
      expect(templates.find(1, "/", shape("2", JSON.stringify([HASH, true])))).toBeUndefined();
    }
    // The decoys are never kept: the value found first is not the call's id.
    for (const shape of bodyShapes.slice(3, 7)) {
      // Written with the call's own id, so the first value is that id too.
      const own = (JSON.parse(shape("1", JSON.stringify(params))) as { id: number }).id;
      const text = shape(String(own), JSON.stringify(params));
      templates.learn(1, "/", text, (JSON.parse(text) as { id: unknown }).id, params, plainOf(params));
      expect(templates.find(1, "/", shape("2", JSON.stringify(params)))).toBeUndefined();
    }
  });

  it("whatever was found last, each body is found as its own call or not at all (property)", () => {
    // Texts of one length around the id that differ before it, just after it or at the very end, so
    // that a comparison with the call found last that skipped a part would answer the wrong call.
    const hashes = [HASH, `0x${"ab".repeat(31)}ac`, `0x${"cb".repeat(32)}`];
    const texts = (id: string, hash: string, version: string) =>
      `{"jsonrpc":"${version}","id":${id},"method":"eth_getBlockByHash","params":["${hash}",false]}`;
    const versions = ["2.0", "2.1"];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(2), fc.nat(1), fc.integer({ min: 0, max: 99999 })), {
          minLength: 1,
          maxLength: 30,
        }),
        (finds) => {
          const templates = new CallTemplates();
          // Only the "2.0" bodies are learned; the "2.1" ones must never be found.
          for (const hash of hashes)
            templates.learn(1, "/", texts("1", hash, "2.0"), 1, [hash, false], plainOf([hash, false]));
          for (const [h, v, id] of finds) {
            const text = texts(String(id), hashes[h]!, versions[v]!);
            const found = templates.find(1, "/", text);
            if (v === 1) expect(found).toBeUndefined();
            else expect(found).toMatchObject({ id, params: [hashes[h], false] });
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("keeps at most 4,096 bodies of at most 1,024 characters: past the cap all are dropped and learned again", () => {
    const templates = new CallTemplates();
    const body = (n: number, id: number) =>
      `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByHash","params":["0x${n.toString(16).padStart(64, "0")}",false]}`;
    const learn = (n: number) => {
      const params = [`0x${n.toString(16).padStart(64, "0")}`, false];
      templates.learn(1, "/", body(n, 1), 1, params, plainOf(params));
    };
    for (let n = 0; n < 4096; n++) learn(n);
    expect(templates.find(1, "/", body(0, 2))).toBeDefined();
    expect(templates.find(1, "/", body(4095, 2))).toBeDefined();
    learn(4096);
    expect(templates.find(1, "/", body(0, 2))).toBeUndefined();
    expect(templates.find(1, "/", body(4095, 2))).toBeUndefined();
    expect(templates.find(1, "/", body(4096, 2))).toMatchObject({ id: 2 });

    const long = (id: number) =>
      `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByHash","params":["${HASH}",false],"pad":"${"x".repeat(1000)}"}`;
    expect(long(1).length).toBeGreaterThan(1024);
    templates.learn(1, "/", long(1), 1, [HASH, false], plainOf([HASH, false]));
    expect(templates.find(1, "/", long(2))).toBeUndefined();
  });

  it("keeps what it found unchanged for every later request", () => {
    const templates = new CallTemplates();
    const params = [HASH, false];
    const text = `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByHash","params":${JSON.stringify(params)}}`;
    templates.learn(1, "/", text, 1, params, plainOf(params));
    const found = templates.find(1, "/", text)!;
    expect(() => (found.params as unknown[]).push(1)).toThrow(TypeError);
    expect(() => (found.plain.checked as unknown[]).push(1)).toThrow(TypeError);
  });
});
