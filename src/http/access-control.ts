/** Every request but health and docs: an API key when keys exist (the key is the tenant), then the rate limit. */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { KeyRing, Tenant } from "../auth/key-ring.js";
import type { RateGroup, RateLimiter } from "../auth/rate-limiter.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's key; null when no keys are configured. */
    tenant: Tenant | null;
  }
  interface FastifyContextConfig {
    /** Which rate limit the route counts against (default: read). */
    rateGroup?: RateGroup;
  }
}

/** Health, the docs and the console's static files: none of them carries data. */
const OPEN_PATHS = ["/healthz", "/readyz", "/docs", "/console"];

function isOpen(url: string): boolean {
  const path = url.split("?")[0] ?? url;
  return OPEN_PATHS.some((open) => path === open || path.startsWith(`${open}/`));
}

function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  retryAfter?: number,
) {
  if (status === 401) reply.header("www-authenticate", 'Bearer realm="chaingate"');
  if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
  // A refused WebSocket upgrade is answered on a socket the HTTP server no longer tracks: close it,
  // or it stays open (and holds up shutdown) until the client goes away.
  if (request.headers.upgrade !== undefined) reply.raw.once("finish", () => request.raw.socket?.destroy());
  return reply
    .code(status)
    .type("application/problem+json")
    .send({
      type: `urn:chaingate:error:${code.toLowerCase().replaceAll("_", "-")}`,
      title: status === 401 ? "Unauthorized" : "Too Many Requests",
      status,
      detail,
      code,
      retryable: status === 429,
    });
}

export function bearerKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === "string") return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  // Browsers cannot set headers on a WebSocket: the key may come as a subprotocol "bearer.<key>".
  const protocols = request.headers["sec-websocket-protocol"];
  if (typeof protocols !== "string") return undefined;
  const offered = protocols.split(",").map((p) => p.trim());
  return offered.find((p) => p.startsWith("bearer."))?.slice("bearer.".length);
}

/**
 * Adds the check to each route as it is declared (not as a global hook): open routes get none, and
 * each route knows its rate-limit group without reading `request.routeOptions` on every request.
 */
export function useAccessControl(app: FastifyInstance, keys: KeyRing, limiter: RateLimiter): void {
  app.decorateRequest("tenant", null);
  app.addHook("onRoute", (route) => {
    if (isOpen(route.url)) return;
    const group: RateGroup = route.config?.rateGroup ?? "read";
    const limited = limiter.limits(group);
    const limit = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      if (!limited) {
        done();
        return;
      }
      const taken = limiter.take(request.tenant?.keyId ?? `ip:${request.ip}`, group);
      if (taken.ok) {
        done();
        return;
      }
      refuse(
        request,
        reply,
        429,
        "RATE_LIMITED",
        `too many ${group.replace("_", " ")} requests; retry in ${taken.retryAfterSeconds} s`,
        taken.retryAfterSeconds,
      );
    };
    const check: onRequestHookHandler = (request, reply, done) => {
      if (!keys.enabledNow) return limit(request, reply, done);
      const key = bearerKey(request);
      if (key === undefined) {
        refuse(request, reply, 401, "API_KEY_REQUIRED", "send an API key: Authorization: Bearer <key>");
        return;
      }
      const known = keys.known(key);
      if (known) {
        request.tenant = known;
        return limit(request, reply, done);
      }
      keys.lookup(key).then(
        (tenant) => {
          if (!tenant) {
            refuse(request, reply, 401, "API_KEY_INVALID", "the API key is unknown or revoked");
            return;
          }
          request.tenant = tenant;
          limit(request, reply, done);
        },
        (error: unknown) => done(error as Error),
      );
    };
    const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [check, ...existing];
  });
}

export const ownerOf = (request: FastifyRequest): string | null => request.tenant?.keyId ?? null;
