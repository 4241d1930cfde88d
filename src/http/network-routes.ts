/** GET /network: each chain and its upstreams as the pool sees them (health, head, lag, latency), no node call. */
import { Type } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import type { ChainRegistry } from "../upstream/chain-registry.js";

export interface EmbeddedStatus {
  status: "running" | "restarting" | "failed";
  restarts: number;
}

export interface NetworkRoutesOptions {
  chains: ChainRegistry;
  /** The embedded node of a devnet chain, as its supervisor sees it. */
  embedded?: (chainId: number) => EmbeddedStatus | undefined;
}

const Upstream = Type.Object({
  label: Type.String({
    description: "the node's scheme, host and port (never its path, query or credentials)",
  }),
  healthy: Type.Boolean({ description: "verified and not in a cool-down after faults" }),
  status: Type.Union([Type.Literal("unverified"), Type.Literal("verified"), Type.Literal("quarantined")], {
    description:
      "unverified: has not answered its chain id yet; quarantined: answers another chain id (never served from)",
  }),
  reported_chain_id: Type.Union([Type.Integer(), Type.Null()]),
  head: Type.Union([Type.Integer(), Type.Null()]),
  lag: Type.Union([Type.Integer(), Type.Null()], { description: "blocks behind the chain's best head" }),
  latency_ms: Type.Union([Type.Number(), Type.Null()], { description: "of its last head read" }),
  answered: Type.Integer(),
  faults: Type.Integer(),
  oldest_state_block: Type.Integer({
    description:
      "the oldest block whose state it holds, as probed or learnt from its answers (0: every block it was asked; a pruned node's is higher)",
  }),
});

const Network = Type.Object({
  chains: Type.Array(
    Type.Object({
      chain_id: Type.Integer(),
      name: Type.String(),
      home: Type.Boolean(),
      head: Type.Union([Type.Integer(), Type.Null()]),
      upstreams: Type.Array(Upstream),
      embedded: Type.Union(
        [
          Type.Object({
            status: Type.Union([Type.Literal("running"), Type.Literal("restarting"), Type.Literal("failed")]),
            restarts: Type.Integer({ description: "times the supervisor brought the node back" }),
          }),
          Type.Null(),
        ],
        { description: "the embedded anvil of a devnet chain; null for configured upstreams" },
      ),
    }),
  ),
});

export const networkRoutes: FastifyPluginAsync<NetworkRoutesOptions> = async (app, { chains, embedded }) => {
  app.get(
    "/network",
    {
      schema: {
        tags: ["Operations"],
        operationId: "network",
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
          healthy: !s.cooling && s.status === "verified",
          status: s.status,
          reported_chain_id: s.reportedChainId,
          head: s.head,
          lag: s.lag,
          latency_ms: s.latencyMs,
          answered: s.answered,
          faults: s.faults,
          oldest_state_block: s.oldestState,
        })),
        embedded: embedded?.(chain.chainId) ?? null,
      })),
    }),
  );
};
