import fc from "fast-check";
import { expect, it } from "vitest";
import { newSecret, signatureHeader, verifySignature } from "./signature.js";
import { checkWebhookUrl, isPrivateAddress } from "./url-guard.js";

it("a signature verifies for its body and secret, and for no other body, secret or stale time", () => {
  fc.assert(
    fc.property(
      fc.string(),
      fc.string({ minLength: 1 }),
      fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }),
      (body, extra, t) => {
        const secret = newSecret();
        const header = signatureHeader(secret, body, t);
        expect(verifySignature(secret, body, header, t)).toBe(true);
        expect(verifySignature(secret, body + extra, header, t)).toBe(false);
        expect(verifySignature(newSecret(), body, header, t)).toBe(false);
        expect(verifySignature(secret, body, header, t + 301)).toBe(false);
      },
    ),
  );
});

it("a malformed signature header is refused, never thrown on", () => {
  fc.assert(
    fc.property(fc.string(), (header) => {
      expect(typeof verifySignature(newSecret(), "{}", header, 1_800_000_000)).toBe("boolean");
    }),
  );
});

const octet = fc.integer({ min: 0, max: 255 });

it("every address in the private, loopback and link-local IPv4 ranges is private; public ones are not", () => {
  fc.assert(
    fc.property(octet, octet, octet, (b, c, d) => {
      for (const a of [10, 127]) expect(isPrivateAddress(`${a}.${b}.${c}.${d}`)).toBe(true);
      expect(isPrivateAddress(`192.168.${c}.${d}`)).toBe(true);
      expect(isPrivateAddress(`169.254.${c}.${d}`)).toBe(true);
      expect(isPrivateAddress(`172.${16 + (b % 16)}.${c}.${d}`)).toBe(true);
      expect(isPrivateAddress(`::ffff:10.${b}.${c}.${d}`)).toBe(true);
      expect(isPrivateAddress(`8.${b}.${c}.${d}`)).toBe(false);
    }),
  );
  expect(isPrivateAddress("::1")).toBe(true);
  expect(isPrivateAddress("fd00::1")).toBe(true);
  expect(isPrivateAddress("2606:4700::1111")).toBe(false);
});

it("webhook URLs: http(s) only, no credentials, private hosts only when allowed; any string is answered, not thrown past", () => {
  expect(() => checkWebhookUrl("https://user:pw@example.com/x", true)).toThrow(/credentials/);
  expect(() => checkWebhookUrl("ftp://example.com/x", true)).toThrow(/http or https/);
  expect(checkWebhookUrl("http://127.0.0.1:9/x", true).hostname).toBe("127.0.0.1");
  expect(() => checkWebhookUrl("http://127.0.0.1:9/x", false)).toThrow(/private/);
  fc.assert(
    fc.property(fc.string(), (raw) => {
      try {
        checkWebhookUrl(raw, false);
      } catch (error) {
        expect((error as { code?: string }).code).toBe("WEBHOOK_URL_REFUSED");
      }
    }),
  );
});
