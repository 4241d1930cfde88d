/** Webhook receivers may not be chaingate's own network: loopback, private and link-local ranges are refused unless allowed. */
import { BlockList, isIP } from "node:net";
import { hostname } from "node:os";
import { ChaingateError } from "../errors/chaingate-error.js";

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  // Documentation ranges (RFC 5737): no real receiver is there; a name that resolves into one is a trick.
  ["192.0.2.0", 24],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const) {
  PRIVATE.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 127],
  // Special-purpose and documentation ranges (RFC 6890 registry, RFC 3849, RFC 9637): discard-only
  // 100::/64, IETF protocol assignments 2001::/23, documentation 2001:db8::/32 and 3fff::/20,
  // SRv6 SIDs 5f00::/16, deprecated site-local fec0::/10.
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["3fff::", 20],
  ["5f00::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE.addSubnet(net, bits, "ipv6");
}

/** An IPv6 address as its eight 16-bit groups (a trailing dotted IPv4 is read as the last two). */
export function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const part = (s: string | undefined) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  const groups =
    tail === undefined
      ? front
      : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : undefined;
}

const v4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address carries, where a router or the host itself would reach that IPv4
 * address: IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96, NAT64
 * 64:ff9b::/96 and 6to4 2002::/16. A receiver written in any of these forms is judged by its IPv4.
 */
export function embeddedIpv4(groups: readonly number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeroTo(5) && g5 === 0xffff) return v4Of(g6, g7);
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return v4Of(g6, g7);
  if (zeroTo(6)) return v4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Of(g6, g7);
  if (g0 === 0x2002) return v4Of(g1, g2);
  return undefined;
}

/** Tunnelling and translation ranges whose far end chaingate cannot judge: Teredo, local-use NAT64. */
const OPAQUE = new BlockList();
OPAQUE.addSubnet("2001::", 32, "ipv6");
OPAQUE.addSubnet("64:ff9b:1::", 48, "ipv6");

/** Whether an IP address (v4, v6, or v4 carried in v6) is loopback, private, link-local or reserved. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, "ipv4");
  if (family !== 6) return true;
  const groups = ipv6Groups(bare);
  if (groups === undefined) return true;
  const v4 = embeddedIpv4(groups);
  if (v4 !== undefined) return PRIVATE.check(v4, "ipv4");
  return PRIVATE.check(bare, "ipv6") || OPAQUE.check(bare, "ipv6");
}

function refused(message: string): ChaingateError {
  return new ChaingateError(message, { code: "WEBHOOK_URL_REFUSED" });
}

/** Checks a URL as registered: http(s), no credentials, and (unless allowed) no private host written as such. */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused("url is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refused("url must be http or https");
  if (url.username !== "" || url.password !== "") throw refused("url must not carry credentials");
  if (allowPrivate) return url;
  const host = normalHost(url.hostname);
  if (isOwnName(host) || (isIP(host) !== 0 && isPrivateAddress(host))) {
    throw refused(
      `${url.hostname} is a loopback, private or reserved address, or this machine's own name (the operator has not allowed those)`,
    );
  }
  return url;
}

/** A host name as DNS compares it: brackets off, lower case, the root's trailing dot(s) dropped ("localhost." is localhost). */
export function normalHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.+$/, "");
}

/** Names that reach this machine whatever DNS says: localhost and its subdomains, and the host's own name (full or short). */
function isOwnName(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost") || host === "") return true;
  const own = normalHost(hostname());
  return own !== "" && (host === own || host === own.split(".")[0]);
}
