import { hostname } from "node:os";
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

/** Each IPv6 form that carries an IPv4 address a router or the host itself would reach. */
const CARRIERS: [string, (v4: [number, number, number, number]) => string][] = [
  ["IPv4-mapped ::ffff:0:0/96", ([a, b, c, d]) => `::ffff:${a}.${b}.${c}.${d}`],
  ["IPv4-translated ::ffff:0:0:0/96", ([a, b, c, d]) => `::ffff:0:${a}.${b}.${c}.${d}`],
  ["IPv4-compatible ::/96", ([a, b, c, d]) => `::${a}.${b}.${c}.${d}`],
  ["NAT64 64:ff9b::/96", ([a, b, c, d]) => `64:ff9b::${a}.${b}.${c}.${d}`],
  [
    "6to4 2002::/16",
    ([a, b, c, d]) => `2002:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}::1`,
  ],
];

it("IPv6 forms that embed a loopback or private IPv4 address are refused as webhook URLs, in every spelling", () => {
  const privateV4 = fc.oneof(
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
  );
  fc.assert(
    fc.property(privateV4, fc.constantFrom(...CARRIERS), (v4, [form, write]) => {
      const address = write(v4);
      expect(isPrivateAddress(address), `${form}: ${address}`).toBe(true);
      // The URL parser rewrites the host (to hex groups): it is judged after that too.
      expect(() => checkWebhookUrl(`http://[${address}]:8080/hook`, false), `${form}: ${address}`).toThrow(
        /private/,
      );
    }),
  );
  // The same forms carrying a public address are public; Teredo and local-use NAT64 hide their far end.
  for (const [form, write] of CARRIERS) expect(isPrivateAddress(write([8, 8, 8, 8])), form).toBe(false);
  expect(isPrivateAddress("2001:0:4136:e378:8000:63bf:3fff:fdd2")).toBe(true);
  expect(isPrivateAddress("64:ff9b:1::a00:1")).toBe(true);
  expect(isPrivateAddress("::")).toBe(true);
  expect(isPrivateAddress("[::1]")).toBe(true);
});

it("host names are judged as DNS reads them, and reserved and documentation ranges are refused at registration", () => {
  const refusedAt = (url: string) => () => checkWebhookUrl(url, false);
  for (const url of [
    "http://localhost./hook",
    "http://LOCALHOST../hook",
    "http://a.b.localhost./hook",
    `http://${hostname()}/hook`,
    `http://${hostname().toUpperCase()}./hook`,
    `http://${hostname().split(".")[0]}:8080/hook`,
    "http://[100::1]/hook",
    "http://[2001:db8::1]/hook",
    "http://[2001:10::1]/hook",
    "http://[3fff::1]/hook",
    "http://[fec0::1]/hook",
    "http://192.0.2.7/hook",
    "http://198.51.100.7/hook",
    "http://203.0.113.7/hook",
    "http://2130706433/hook",
  ])
    expect(refusedAt(url), url).toThrow(/loopback, private or reserved/);
  for (const url of ["https://hooks.example.com/x", "http://[2606:4700::1111]/x", "http://8.8.8.8/x"])
    expect(checkWebhookUrl(url, false).protocol).toMatch(/^https?:$/);
  // An operator who allows private receivers may still register them.
  expect(checkWebhookUrl("http://localhost./hook", true).hostname).toBe("localhost.");
});
