/** GET /network: each chain and its upstreams as the pool sees them (health, head, lag, latency), no node call. */
import { Type } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import type { ChainRegistry } from "../upstream/chain-registry.js";

export interface NetworkRoutesOptions {
  chains: ChainRegistry;
}

const Upstream = Type.Object({
  label: Type.String({ description: "the node's URL without credentials" }),
  healthy: Type.Boolean({ description: "false while in a cool-down after faults" }),
  head: Type.Union([Type.Integer(), Type.Null()]),
  lag: Type.Union([Type.Integer(), Type.Null()], { description: "blocks behind the chain's best head" }),
  latency_ms: Type.Union([Type.Number(), Type.Null()], { description: "of its last head read" }),
  answered: Type.Integer(),
  faults: Type.Integer(),
});

const Network = Type.Object({
  chains: Type.Array(
    Type.Object({
      chain_id: Type.Integer(),
      name: Type.String(),
      home: Type.Boolean(),
      head: Type.Union([Type.Integer(), Type.Null()]),
      upstreams: Type.Array(Upstream),
    }),
  ),
});

export const networkRoutes: FastifyPluginAsync<NetworkRoutesOptions> = async (app, { chains }) => {
  app.get(
    "/network",
    {
      schema: {
        tags: ["Operations"],
        summary:
          "Chains and their upstreams: health, head, lag and latency, as the gateway last measured them",
        response: { 200: Network },
      },
    },
    async () => ({
      chains: chains.all().map((chain) => ({
        chain_id: chain.chainId,
        name: chain.name,
        home: chain.chainId === chains.homeChainId,
        head: chain.head?.head ?? chain.pool.bestHead ?? null,
        upstreams: chain.pool.stats().map((s) => ({
          label: s.label,
          healthy: !s.cooling,
          head: s.head,
          lag: s.lag,
          latency_ms: s.latencyMs,
          answered: s.answered,
          faults: s.faults,
        })),
      })),
    }),
  );
};
