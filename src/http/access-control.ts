/** Every request but health and docs: an API key when keys exist (the key is the tenant), then the rate limit. */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { KeyRing, Tenant } from "../auth/key-ring.js";
import type { RateGroup, RateLimiter } from "../auth/rate-limiter.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { ErrorCode } from "../errors/codes.js";
import { problemOf } from "./problem.js";

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

/** Health, the docs (also as /openapi.json) and the console's static files: none of them carries data. */
const OPEN_PATHS = ["/healthz", "/readyz", "/docs", "/openapi.json", "/console", "/favicon.ico"];

export function isOpen(url: string): boolean {
  const path = url.split("?")[0] ?? url;
  return OPEN_PATHS.some((open) => path === open || path.startsWith(`${open}/`));
}

/** Answers a refusal before any handler runs (also for a WebSocket upgrade, whose socket is closed). */
export function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  retryAfter?: number,
) {
  const problem = problemOf(new ChaingateError(detail, { code }));
  if (problem.status === 401) reply.header("www-authenticate", 'Bearer realm="chaingate"');
  if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
  // A refused WebSocket upgrade is answered on a socket the HTTP server no longer tracks: close it,
  // or it stays open (and holds up shutdown) until the client goes away.
  if (request.headers.upgrade !== undefined) reply.raw.once("finish", () => request.raw.socket?.destroy());
  return reply.code(problem.status).type("application/problem+json").send(problem);
}

export function bearerKey(request: { headers: IncomingHttpHeaders }): string | undefined {
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
export interface RateLimiters {
  /** Per API key, when keys exist. */
  withKeys: RateLimiter;
  /** Per client address, when none exists. */
  withoutKeys: RateLimiter;
}

/** Requests each API key has in flight (WebSockets are counted by their own cap). */
export class RequestsInFlight {
  private readonly held = new Map<string, number>();

  /** `max` <= 0: no cap; `share` gives this instance's part of it (the cap holds for the cluster). */
  constructor(
    readonly max: number,
    private readonly share: (cap: number) => number = (cap) => cap,
  ) {}

  /**
   * Takes a slot for `keyId` until `response` closes, or until the answered release is called (the
   * read fast path hands a request on to Fastify, which takes its own); undefined when the key
   * holds `max` already.
   */
  enter(keyId: string, response: ServerResponse): (() => void) | undefined {
    if (this.max <= 0) return () => {};
    const held = this.held.get(keyId) ?? 0;
    if (held >= this.share(this.max)) return undefined;
    this.held.set(keyId, held + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      response.off("close", release);
      const left = (this.held.get(keyId) ?? 1) - 1;
      if (left <= 0) this.held.delete(keyId);
      else this.held.set(keyId, left);
    };
    response.once("close", release);
    return release;
  }
}

const TAKEN = { ok: true } as const;

/** Takes one token of `group` for a caller: its API key's, or without keys its client address's. */
export function takeToken(
  limiters: RateLimiters,
  tenant: Tenant | null,
  ip: string | undefined,
  group: RateGroup,
) {
  if (tenant !== null) return limiters.withKeys.take(tenant.keyId, group);
  // Without keys reads are unlimited unless set on purpose: no subject string to build per request.
  return limiters.withoutKeys.limits(group) ? limiters.withoutKeys.take(`ip:${ip}`, group) : TAKEN;
}

export function useAccessControl(
  app: FastifyInstance,
  keys: KeyRing,
  limiters: RateLimiters,
  inFlight: RequestsInFlight,
): void {
  app.decorateRequest("tenant", null);
  const admit = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const tenant = request.tenant;
    if (tenant === null || request.headers.upgrade !== undefined) return true;
    if (inFlight.enter(tenant.keyId, reply.raw) === undefined) {
      refuse(
        request,
        reply,
        "CONCURRENCY_LIMIT",
        `too many requests in flight: at most ${inFlight.max} per API key; retry when some have answered`,
        1,
      );
      return false;
    }
    return true;
  };
  app.addHook("onRoute", (route) => {
    if (isOpen(route.url)) return;
    const group: RateGroup = route.config?.rateGroup ?? "read";
    const limitedWithKeys = limiters.withKeys.limits(group);
    const limitedWithoutKeys = limiters.withoutKeys.limits(group);
    const limit = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      const tenant = request.tenant;
      if (!admit(request, reply)) return;
      if (!(tenant === null ? limitedWithoutKeys : limitedWithKeys)) {
        done();
        return;
      }
      const taken = takeToken(limiters, tenant, request.ip, group);
      if (taken.ok) {
        done();
        return;
      }
      refuse(
        request,
        reply,
        "RATE_LIMITED",
        `too many ${group.replace("_", " ")} requests; retry in ${taken.retryAfterSeconds} s`,
        taken.retryAfterSeconds,
      );
    };
    const check: onRequestHookHandler = (request, reply, done) => {
      if (!keys.enabledNow) return limit(request, reply, done);
      const key = bearerKey(request);
      if (key === undefined) {
        refuse(request, reply, "API_KEY_REQUIRED", "send an API key: Authorization: Bearer <key>");
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
            refuse(request, reply, "API_KEY_INVALID", "the API key is unknown or revoked");
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

/**
 * Operator actions: with API keys only an admin key may (`refusal` says what was refused); without
 * keys the one local user may. Answers the admin key's id, or null without keys.
 */
export function requireAdmin(request: FastifyRequest, refusal: string): string | null {
  const tenant = request.tenant;
  if (tenant === null || tenant === undefined) return null;
  if (tenant.role !== "admin") throw new ChaingateError(refusal, { code: "ADMIN_REQUIRED" });
  return tenant.keyId;
}

/** Whose quotas and filters a request uses: its API key, or without keys its client address. */
export const tenantOf = (request: FastifyRequest): string => request.tenant?.keyId ?? `ip:${request.ip}`;
