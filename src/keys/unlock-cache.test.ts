/** The unlock cache answers only the password that unlocked, by a tag that means nothing outside its process. */
import fc from "fast-check";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { type OpenedAccount, UnlockCache } from "./unlock-cache.js";

const opened: OpenedAccount = {
  account: privateKeyToAccount(`0x${"11".repeat(32)}`),
  address: "0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A",
  owner: null,
};

/** Wallet ids as the store makes them hold no NUL (the tag's separator). */
const walletId = fc.string({ minLength: 1, maxLength: 40 }).filter((id) => !id.includes("\0"));
const password = fc.string({ maxLength: 64, unit: "binary" });

describe("unlock cache", () => {
  it("answers a key and a signer for the password that unlocked, and for no other", () => {
    fc.assert(
      fc.property(walletId, password, password, (id, right, other) => {
        fc.pre(right !== other);
        const cache = new UnlockCache(60_000);
        cache.set(id, right, Buffer.alloc(32, 7));
        cache.rememberAccount(id, right, 3, opened);
        expect(cache.get(id, right)).toEqual(Buffer.alloc(32, 7));
        expect(cache.account(id, right, 3)).toBe(opened);
        expect(cache.get(id, other)).toBeUndefined();
        expect(cache.account(id, other, 3)).toBeUndefined();
        // Another wallet with the same password finds nothing either.
        expect(cache.get(`${id}x`, right)).toBeUndefined();
      }),
    );
  });

  it("tags are equal for equal inputs in one process, differ between inputs, and between caches", () => {
    fc.assert(
      fc.property(walletId, password, password, (id, a, b) => {
        fc.pre(a !== b);
        const one = new UnlockCache(60_000);
        expect(one.tagOf(id, a)).toBe(one.tagOf(id, a));
        expect(one.tagOf(id, a)).toMatch(/^[0-9a-f]{64}$/);
        expect(one.tagOf(id, a)).not.toBe(one.tagOf(id, b));
        // Each cache has its own secret: a tag says nothing to another process.
        expect(new UnlockCache(60_000).tagOf(id, a)).not.toBe(one.tagOf(id, a));
      }),
    );
  });

  it("forgets a key when its time is up, and zeroes it", () => {
    let now = 0;
    const cache = new UnlockCache(1_000, () => now);
    const key = Buffer.alloc(32, 9);
    cache.set("w", "pw", key);
    const kept = cache.get("w", "pw")!;
    expect(kept).toEqual(key);
    now = 1_000;
    expect(cache.get("w", "pw")).toBeUndefined();
    expect(kept.every((byte) => byte === 0)).toBe(true);
  });
});
