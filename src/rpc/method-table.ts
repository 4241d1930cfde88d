/** The method table: one row per node method drives Native paths, POST /, validation, caching and OpenAPI. */
import type { CallTraits, TraitsOf } from "../upstream/call-traits.js";
import { BEHAVIOURS } from "./method-behaviours.js";
import { CLIENT_METHODS } from "./method-rows-client.js";
import { SIGNER_METHODS } from "./method-rows-custody.js";
import { NAMESPACE_METHODS } from "./method-rows-namespaces.js";
import { SPEC_METHODS } from "./method-rows-spec.js";
import { block, type MethodSpec, type Row } from "./method-spec.js";

export type { MethodSpec } from "./method-spec.js";

function toSpec(inSpec: boolean) {
  return ([name, summary, params, handler, cache, traits = []]: Row): MethodSpec => {
    const refine = BEHAVIOURS[name]?.refine;
    return {
      name,
      summary,
      params,
      inSpec,
      handler,
      cache,
      traits: new Set(traits),
      ...(refine ? { refine } : {}),
    };
  };
}

export const METHODS: readonly MethodSpec[] = [
  ...SPEC_METHODS.map(toSpec(true)),
  ...CLIENT_METHODS.map(toSpec(false)),
  ...SIGNER_METHODS.map(toSpec(false)),
  ...NAMESPACE_METHODS.map(toSpec(false)),
];

export const METHODS_BY_NAME: ReadonlyMap<string, MethodSpec> = new Map(METHODS.map((m) => [m.name, m]));

const PLAIN: CallTraits = { behind: false, send: false, shared: false, pure: false };

const CALL_TRAITS: ReadonlyMap<string, CallTraits> = new Map(
  METHODS.map(({ name, traits, handler, cache, params }) => [
    name,
    {
      // The rows' shared state-at param (`block`, "latest" when left out): a block whose state the call reads.
      stateAt: params.indexOf(block) >= 0 ? params.indexOf(block) : undefined,
      behind: traits.has("behind"),
      send: traits.has("send"),
      shared: traits.has("shared"),
      // What the cache may hold, or share between callers, has no effect: a second asking changes nothing.
      pure: handler === "upstream" && !traits.has("send") && (cache !== "none" || traits.has("shared")),
    },
  ]),
);

/** What the pool and its node connections must know of a method, from its row (handed down by the composition root). */
export const upstreamTraitsOf: TraitsOf = (method) => CALL_TRAITS.get(method) ?? PLAIN;
