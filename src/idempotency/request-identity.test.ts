import fc from "fast-check";
import { expect, it } from "vitest";
import { requestHash } from "./request-identity.js";

const body = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "password"),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 6 },
);

it("a request's identity ignores key order, at every depth", () => {
  fc.assert(
    fc.property(body, (value) => {
      const reversed = Object.fromEntries(Object.entries(value).reverse());
      const nested = { outer: value };
      const nestedReversed = { outer: reversed };
      expect(requestHash(reversed)).toBe(requestHash(value));
      expect(requestHash(nestedReversed)).toBe(requestHash(nested));
    }),
  );
});

it("leaves the password out (no fast hash of it is stored), but not any other field", () => {
  fc.assert(
    fc.property(body, fc.string(), fc.string(), (value, a, b) => {
      expect(requestHash({ ...value, password: a })).toBe(requestHash({ ...value, password: b }));
      if (a !== b) expect(requestHash({ ...value, memo: a })).not.toBe(requestHash({ ...value, memo: b }));
    }),
  );
});

it("tells apart what changes the request: a value, the chain it goes to, an absent field", () => {
  expect(requestHash({ to: "0x1", value: "1" })).not.toBe(requestHash({ to: "0x1", value: "2" }));
  expect(requestHash({ to: "0x1" }, { chain: 1001 })).not.toBe(requestHash({ to: "0x1" }, { chain: 1002 }));
  // An undefined field is the same request as one without it (JSON drops it too).
  expect(requestHash({ to: "0x1", data: undefined })).toBe(requestHash({ to: "0x1" }));
  expect(requestHash({ to: "0x1", data: null })).not.toBe(requestHash({ to: "0x1" }));
});
