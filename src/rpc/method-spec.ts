/** What one row of the method table says about a method, and the helpers the row files write rows with. */
import type { TSchema } from "@sinclair/typebox";
import { BlockSpecifier } from "./param-schemas.js";

export interface ParamSpec {
  readonly name: string;
  readonly schema: TSchema;
  readonly required: boolean;
  /** Filled in when the caller leaves the parameter out, so every node sees the same call. */
  readonly default?: unknown;
}

/**
 * How an answer may be reused (issue: gateway core). `static`: never changes for a chain;
 * `immutable`: keyed by hash, never changes once found; `head`: valid for the current head only;
 * `block`: immutable when the block parameter names a hash or an old number, else like `head`.
 */
export type CachePolicy = "none" | "static" | "immutable" | "head" | "block";

/**
 * Where a call is answered: forwarded to the chain's nodes, by the gateway's own filter engine, or
 * signed by the caller's custody wallets (production nodes hold no unlocked accounts).
 */
export type MethodHandler = "upstream" | "filters" | "custody";

/**
 * What a row says of a method beyond its params and cache, as data:
 * - small: its answer is a quantity, a hash, a boolean or a short string whatever the chain holds, so
 *   it never floods: a key that was answered its share of large reads lately may still ask it.
 * - behind: a null or empty answer may only mean the node has not seen the block yet: the pool asks
 *   the upstreams ahead of the one that answered.
 * - send: it may move value: never asked again after a dropped connection, and the head is
 *   refreshed after it.
 * - shared: a plain value, the same for every caller in one turn: identical calls share one call of
 *   the turn's batch.
 * - unsigned: a custody method that neither signs nor derives a key (outside the "sign" budget).
 */
export type MethodTrait = "small" | "behind" | "send" | "shared" | "unsigned";

export interface MethodSpec {
  readonly name: string;
  readonly summary: string;
  readonly params: readonly ParamSpec[];
  /** One of the 33 operations of the service spec (the rest serve client libraries on POST /). */
  readonly inSpec: boolean;
  readonly handler: MethodHandler;
  readonly cache: CachePolicy;
  readonly traits: ReadonlySet<MethodTrait>;
  /** Checks across parameters that a schema cannot express; returns the problem or undefined. */
  readonly refine?: (params: readonly unknown[]) => string | undefined;
}

export const req = (name: string, schema: TSchema): ParamSpec => ({ name, schema, required: true });
export const opt = (name: string, schema: TSchema, fill?: unknown): ParamSpec =>
  fill === undefined ? { name, schema, required: false } : { name, schema, required: false, default: fill };
export const block = opt("block", BlockSpecifier, "latest");

export type Row = [
  name: string,
  summary: string,
  params: ParamSpec[],
  handler: MethodHandler,
  cache: CachePolicy,
  traits?: MethodTrait[],
];
