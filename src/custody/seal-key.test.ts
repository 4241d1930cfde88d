import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SealKey } from "./seal-key.js";

describe("SealKey", () => {
  const key = new SealKey(randomBytes(32).toString("hex"));

  it("opens what it sealed, for any secret and context", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.string(), (secret, context) => {
        expect(new Uint8Array(key.open(key.seal(secret, context), context))).toEqual(secret);
      }),
    );
  });

  it("a sealed key moved to another wallet row, altered, or opened under another server key does not open", () => {
    const sealed = key.seal(randomBytes(32), "wallet-a\n0\n0xabc");
    expect(() => key.open(sealed, "wallet-b\n0\n0xabc")).toThrow();
    const parsed = JSON.parse(sealed) as { data: string };
    const flipped = JSON.stringify({ ...parsed, data: `${parsed.data.slice(0, -2)}00` });
    if (flipped !== sealed) expect(() => key.open(flipped, "wallet-a\n0\n0xabc")).toThrow();
    const other = new SealKey(randomBytes(32).toString("hex"));
    expect(other.id).not.toBe(key.id);
    expect(() => other.open(sealed, "wallet-a\n0\n0xabc")).toThrow();
  });

  it("its fingerprint is stable for one secret and reveals neither the secret nor the sealing key", () => {
    const secret = randomBytes(32).toString("hex");
    expect(new SealKey(secret).id).toBe(new SealKey(secret).id);
    expect(secret).not.toContain(new SealKey(secret).id);
  });
});
