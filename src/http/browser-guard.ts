/** Without API keys, what a web page on the operator's machine could reach is refused, as geth does it: Host and Origin. */
import { isIP } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { KeyRing } from "../auth/key-ring.js";
import { refuse } from "./access-control.js";

export interface BrowserGuardOptions {
  keys: KeyRing;
  /** The listen address (a host name given there is accepted too). */
  listenHost: string;
  vhosts: readonly string[];
  allowedOrigins: readonly string[];
}

/** The host name of a Host header, without port or IPv6 brackets, lower case. */
export function hostName(header: string): string {
  const trimmed = header.trim().toLowerCase();
  if (trimmed.startsWith("["))
    return trimmed.slice(1, trimmed.indexOf("]") === -1 ? undefined : trimmed.indexOf("]"));
  const colon = trimmed.lastIndexOf(":");
  return colon === -1 || trimmed.indexOf(":") !== colon ? trimmed : trimmed.slice(0, colon);
}

/**
 * DNS rebinding needs a name the attacker controls: an IP literal, localhost and the names the
 * operator listed are safe; any other name is refused.
 */
export function checkHost(header: string | undefined, options: Omit<BrowserGuardOptions, "keys">): boolean {
  if (header === undefined || header === "") return true;
  const name = hostName(header);
  if (isIP(name) !== 0 || name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === options.listenHost.toLowerCase()) return true;
  return options.vhosts.some(
    (vhost) => vhost === "*" || vhost === name || (vhost.startsWith("*.") && name.endsWith(vhost.slice(1))),
  );
}

/**
 * The last Host header checked, the options it was checked against, and the answer: a client sends
 * the same Host on every request, and `checkHost` (trim, lower case, port, IP literal) cost about
 * 1.2k instructions a request. Any other header or options object is checked afresh.
 */
let lastHost: { header: string; options: object; allowed: boolean } | undefined;

/** `checkHost`, answered from the last check when the header and the options are the same again. */
export function hostAllowed(header: string | undefined, options: Omit<BrowserGuardOptions, "keys">): boolean {
  if (
    header !== undefined &&
    lastHost !== undefined &&
    lastHost.header === header &&
    lastHost.options === options
  )
    return lastHost.allowed;
  const allowed = checkHost(header, options);
  if (header !== undefined) lastHost = { header, options, allowed };
  return allowed;
}

/** A browser's own pages (same origin) and the origins the operator listed; `null` origins never. */
export function originAllowed(origin: string, host: string | undefined, allowed: readonly string[]): boolean {
  if (allowed.includes("*") || allowed.includes(origin)) return true;
  if (origin === "null" || host === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.trim().toLowerCase();
  } catch {
    return false;
  }
}

export function useBrowserGuard(app: FastifyInstance, options: BrowserGuardOptions): void {
  app.addHook("onRequest", (request: FastifyRequest, reply, done) => {
    // With keys, a page cannot act for the operator: it does not have the key.
    if (options.keys.enabledNow) {
      done();
      return;
    }
    const host = request.headers.host;
    if (!hostAllowed(host, options)) {
      refuse(
        request,
        reply,
        "HOST_NOT_ALLOWED",
        `invalid host specified: "${String(host).slice(0, 100)}" (list it with --vhosts, or use an API key)`,
      );
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !originAllowed(origin, host, options.allowedOrigins)) {
      refuse(
        request,
        reply,
        "ORIGIN_NOT_ALLOWED",
        `requests from the web origin "${origin.slice(0, 100)}" are refused (list it with --allowed-origins, or use an API key)`,
      );
      return;
    }
    done();
  });
  // The console and the docs are never shown inside another site's frame (clickjacking).
  app.addHook("onSend", async (_request, reply, payload) => {
    const type = reply.getHeader("content-type");
    if (typeof type === "string" && type.startsWith("text/html")) {
      reply.header("x-frame-options", "DENY");
      const csp = reply.getHeader("content-security-policy");
      reply.header(
        "content-security-policy",
        typeof csp === "string" && csp !== "" ? `${csp}; frame-ancestors 'none'` : "frame-ancestors 'none'",
      );
    }
    return payload;
  });
}
