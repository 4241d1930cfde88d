/** Webhook receivers may not be chaingate's own network: loopback, private and link-local ranges are refused unless allowed. */
import { BlockList, isIP } from "node:net";
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
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const) {
  PRIVATE.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 127],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE.addSubnet(net, bits, "ipv6");
}

/** Whether an IP address (v4, v6, or v4 mapped into v6) is loopback, private, link-local or reserved. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped) return PRIVATE.check(mapped, "ipv4");
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, "ipv4");
  if (family === 6) return PRIVATE.check(bare, "ipv6");
  return true;
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
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) !== 0 && isPrivateAddress(host))) {
    throw refused(`${url.hostname} is a loopback or private address (the operator has not allowed those)`);
  }
  return url;
}
