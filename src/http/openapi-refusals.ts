/** Documents the refusals the gateway's own guards answer before any route runs (keys, Host/Origin, rate, size). */
import type { FastifySchema } from "fastify";
import { ProblemSchema } from "../wallets/wallet-schemas.js";
import { isOpen } from "./access-control.js";

function problem(description: string) {
  return { ...ProblemSchema, description };
}

/** Every route but the open ones (health, docs, console) passes the key check and the rate limit. */
const GUARDED = {
  401: problem(
    "`API_KEY_REQUIRED` (keys exist and none was sent) or `API_KEY_INVALID` (unknown or revoked key); see docs/api.md, error code index",
  ),
  429: problem(
    "`RATE_LIMITED` (the route's rate group is spent; `Retry-After` says when) or `CONCURRENCY_LIMIT` (too many requests of this key in flight)",
  ),
};

/** The browser guard runs on every route while no API key exists (geth's --http.vhosts and --http.corsdomain). */
const BROWSER = {
  403: problem(
    "`HOST_NOT_ALLOWED` or `ORIGIN_NOT_ALLOWED`: without API keys, only listed Host and Origin values are served",
  ),
};

/** REST routes answer an oversized body with a problem; envelope routes answer it as a JSON-RPC error. */
const SIZED = { 413: problem("`BODY_TOO_LARGE`: the body is larger than `--body-limit`") };

interface Documented {
  schema: FastifySchema;
  url: string;
}

/** @fastify/swagger `transform`: adds the guards' refusals to a route's documented responses, not to its runtime schema. */
export function withGuardRefusals({ schema, url }: Documented): Documented {
  if (schema === undefined || (schema as { hide?: boolean }).hide === true) return { schema, url };
  const declared = (schema.response ?? {}) as Record<string, unknown>;
  const problems = "400" in declared;
  const added: Record<string, unknown> = { ...BROWSER, ...(isOpen(url) ? {} : GUARDED) };
  if (problems && schema.body !== undefined) Object.assign(added, SIZED);
  const response: Record<string, unknown> = { ...added, ...declared };
  return { schema: { ...schema, response }, url };
}
