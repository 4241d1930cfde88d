import fc from "fast-check";
import { expect, it } from "vitest";
import {
  anyEnvelopeParts,
  concatArrays,
  envelopeParts,
  JsonText,
  MalformedJson,
  OWN_COPY_MAX,
  resultJsonText,
  skipValue,
} from "./json-text.js";

it("reads any JSON value's extent and an array's item count as JSON.parse sees them (property)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom("", " ", "\n\t "), (value, space) => {
      const text = JSON.stringify(value, null, space === "" ? undefined : 1);
      const { end, items } = skipValue(`${space}${text}${space},`, 0);
      expect(end).toBe(space.length + text.length);
      expect(items).toBe(Array.isArray(value) ? value.length : 0);
    }),
  );
});

it("an envelope's result and error come back as their own JSON text, whatever the order and spacing (property)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), fc.jsonValue(), fc.boolean(), (result, error, id, spaced) => {
      const envelope = spaced
        ? JSON.stringify({ result, id, error, jsonrpc: "2.0" }, null, 2)
        : JSON.stringify({ jsonrpc: "2.0", id, error, result });
      const parts = envelopeParts(envelope);
      // Compared with a JSON round trip of their own (JSON has no -0).
      expect(JSON.parse(parts.result!.text)).toEqual(JSON.parse(JSON.stringify(result)));
      expect(JSON.parse(parts.error!.text)).toEqual(JSON.parse(JSON.stringify(error)));
    }),
  );
  expect(envelopeParts('{"jsonrpc":"2.0","id":1}')).toEqual({ result: undefined, error: undefined });
});

it("an answer in the nodes' common shape reads as the general loop reads it, near misses of the shape included (property)", () => {
  // The shape's own text and the ways a node's answer can leave it: other ids, spacing, members after.
  const id = fc.oneof(fc.nat().map(String), fc.constantFrom("", "-1", "1.5", '"a"', "null", "01", " 1"));
  const tail = fc.constantFrom("}", "}\n", "} ", ',"error":null}', ',"result":2}', "", "}x", "}}");
  const result = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.constantFrom(" 1", "[1,", '"open', "", "tru", "{}", "[]", '"0x1"'),
  );
  fc.assert(
    fc.property(id, result, tail, (idText, resultText, end) => {
      const text = `{"jsonrpc":"2.0","id":${idText},"result":${resultText}${end}`;
      const read = (how: (t: string) => unknown) => {
        try {
          return how(text);
        } catch (error) {
          return error instanceof MalformedJson ? "malformed" : error;
        }
      };
      expect(read(envelopeParts)).toEqual(read(anyEnvelopeParts));
    }),
    { numRuns: 2000 },
  );
  expect(envelopeParts('{"jsonrpc":"2.0","id":7,"result":"0x1"}\n')).toEqual({
    result: { text: '"0x1"', start: 33, items: 0 },
    error: undefined,
  });
});

it("a result made JsonText is the node's text of it, as many bytes as UTF-8 counts, short or long, ASCII or not (property)", () => {
  const long = fc.string({ minLength: OWN_COPY_MAX, maxLength: OWN_COPY_MAX + 40 });
  fc.assert(
    fc.property(fc.oneof(fc.jsonValue(), long), fc.nat({ max: 2 ** 40 }), (result, id) => {
      const text = `{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(result)}}`;
      const bytes = Buffer.from(text, "utf8");
      const ascii = bytes.every((b) => b < 0x80);
      const member = envelopeParts(text).result!;
      expect(text.slice(member.start, member.start + member.text.length)).toBe(member.text);
      const json = resultJsonText(member, bytes, ascii);
      expect(json.text).toBe(member.text);
      expect(json.items).toBe(member.items);
      expect(json.byteLength).toBe(Buffer.byteLength(member.text));
    }),
    { numRuns: 500 },
  );
});

it("members' names are read as JSON.parse reads them, escapes, repeats and all; a raw control character in a name is refused (property)", () => {
  const name = fc.oneof(
    fc.constantFrom("result", "error", "res\\u0075lt", "resul", "results", "erro"),
    fc.string({ unit: "binary" }),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(name, fc.jsonValue()), { maxLength: 6 }), (members) => {
      // Written by hand, so a name may repeat and be escaped as a node might write it.
      const text = `{${members.map(([key, value]) => `${key === "res\\u0075lt" ? `"${key}"` : JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`;
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const parts = envelopeParts(text);
      const own = (key: string) => (Object.hasOwn(parsed, key) ? parsed[key] : undefined);
      expect(parts.result === undefined ? undefined : JSON.parse(parts.result.text)).toEqual(own("result"));
      expect(parts.error === undefined ? undefined : JSON.parse(parts.error.text)).toEqual(own("error"));
    }),
  );
  expect(JSON.parse(envelopeParts('{"res\\u0075lt":1}').result!.text)).toBe(1);
  expect(() => envelopeParts('{"a\nb":1}')).toThrow(MalformedJson);
});

it("strings with escaped quotes and backslashes end where JSON says", () => {
  const text = JSON.stringify({ result: ['a"b\\', '\\"', "]}"], id: 1 });
  expect(JSON.parse(envelopeParts(text).result!.text)).toEqual(['a"b\\', '\\"', "]}"]);
  expect(envelopeParts(text).result!.items).toBe(3);
});

it("text that is not one JSON object is refused, never half read", () => {
  for (const bad of [
    '{"result":[1,2}',
    '{"result":"open',
    "[1]",
    '{"a":1} trailing',
    '{"a" 1}',
    "",
    '{"a":}',
    "{} trailing",
  ])
    expect(() => envelopeParts(bad), bad).toThrow(MalformedJson);
  fc.assert(
    fc.property(fc.string(), (text) => {
      try {
        envelopeParts(text);
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedJson);
      }
    }),
  );
});

it("arrays' texts join into one array with their counts summed", () => {
  const joined = concatArrays([
    new JsonText("[1,2]", 2),
    new JsonText("[]", 0),
    new JsonText(' [ {"a":3} ] ', 1),
  ]);
  expect(JSON.parse(joined.text)).toEqual([1, 2, { a: 3 }]);
  expect(joined.items).toBe(3);
});
