import fc from "fast-check";
import { expect, it } from "vitest";
import { concatArrays, envelopeMembers, JsonText, MalformedJson, skipValue } from "./json-text.js";

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

it("an envelope's members come back as their own JSON text, whatever the order and spacing (property)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), fc.boolean(), (result, id, spaced) => {
      const envelope = spaced
        ? JSON.stringify({ result, id, jsonrpc: "2.0" }, null, 2)
        : JSON.stringify({ jsonrpc: "2.0", id, result });
      const members = envelopeMembers(envelope);
      // Compared with a JSON round trip of their own (JSON has no -0).
      expect(JSON.parse(members.get("result")!.text)).toEqual(JSON.parse(JSON.stringify(result)));
      expect(JSON.parse(members.get("id")!.text)).toEqual(JSON.parse(JSON.stringify(id)));
    }),
  );
});

it("members' names are read as JSON.parse reads them, escapes and all; a raw control character in a name is refused (property)", () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string({ unit: "binary" }), fc.jsonValue(), { maxKeys: 5 }), (object) => {
      const members = envelopeMembers(JSON.stringify(object));
      expect([...members.keys()].sort()).toEqual(Object.keys(JSON.parse(JSON.stringify(object))).sort());
    }),
  );
  expect([...envelopeMembers('{"res\\u0075lt":1}').keys()]).toEqual(["result"]);
  expect(() => envelopeMembers('{"a\nb":1}')).toThrow(MalformedJson);
});

it("strings with escaped quotes and backslashes end where JSON says", () => {
  const text = JSON.stringify({ result: ['a"b\\', '\\"', "]}"], id: 1 });
  expect(JSON.parse(envelopeMembers(text).get("result")!.text)).toEqual(['a"b\\', '\\"', "]}"]);
  expect(envelopeMembers(text).get("result")!.items).toBe(3);
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
  ])
    expect(() => envelopeMembers(bad), bad).toThrow(MalformedJson);
  fc.assert(
    fc.property(fc.string(), (text) => {
      try {
        envelopeMembers(text);
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
