/** Cursors read back what they were made from; anything else a client sends is refused as invalid params. */
import fc from "fast-check";
import { expect, it } from "vitest";
import { cursorOf, parseCursor } from "./stream-cursor.js";

const stream = fc.stringMatching(/^[0-9a-f]{32}$/);
const position = fc.record({
  block: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  index: fc.integer({ min: -1, max: 0xffffffe }),
});
const count = fc.integer({ min: 0, max: 2 ** 48 - 1 });

it("a cursor reads back as the stream, position and count it was made from", () => {
  fc.assert(
    fc.property(stream, position, count, (id, at, n) => {
      expect(parseCursor(cursorOf(id, at, n))).toEqual({ stream: id, at, count: n });
    }),
  );
});

it("a cursor made before counts were kept reads back with no count", () => {
  fc.assert(
    fc.property(stream, position, (id, at) => {
      const old = cursorOf(id, at, 0).replace(/-[0-9a-f]+$/, "");
      expect(parseCursor(old)).toEqual({ stream: id, at, count: undefined });
    }),
  );
});

it("anything that is not a cursor is refused as invalid params", () => {
  const refused = (value: unknown) =>
    expect(() => parseCursor(value)).toThrow(
      expect.objectContaining({
        code: "INVALID_PARAMS",
        message: expect.stringMatching(/resumeAfter must be a cursor/),
      }),
    );
  for (const value of [
    undefined,
    null,
    7,
    {},
    "",
    `${"0".repeat(32)}`,
    `${"0".repeat(31)}-1-0`,
    `${"0".repeat(32)}-1-0-1-2`,
    `${"A".repeat(32)}-1-0`,
  ])
    refused(value);
  fc.assert(
    fc.property(fc.string(), (text) => {
      if (/^[0-9a-f]{32}-[0-9a-f]{1,12}-[0-9a-f]{1,8}(-[0-9a-f]{1,12})?$/.test(text)) return;
      refused(text);
    }),
  );
});
