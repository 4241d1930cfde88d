/** Liveness (`/healthz`) and readiness (`/readyz`, derived from each chain's eth_syncing). */
import { Type } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import type { ChainRegistry } from "../upstream/chain-registry.js";

export interface HealthRoutesOptions {
  chains: ChainRegistry;
  startedAt: number;
}

const ChainStatus = Type.Object({
  chain_id: Type.Integer(),
  home: Type.Boolean(),
  reachable: Type.Boolean(),
  synced: Type.Boolean(),
  head: Type.Union([Type.Integer(), Type.Null()]),
  syncing: Type.Optional(Type.Unknown({ description: "the node's eth_syncing object while it syncs" })),
  error: Type.Optional(Type.String()),
});

const Readiness = Type.Object({
  synced: Type.Boolean({ description: "true when the home chain's node reports it is not syncing" }),
  ready: Type.Boolean(),
  chains: Type.Array(ChainStatus),
});

export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, { chains, startedAt }) => {
  app.get(
    "/healthz",
    {
      schema: {
        tags: ["Operations"],
        summary: "Liveness: the process answers",
        response: { 200: Type.Object({ status: Type.Literal("ok"), uptime_seconds: Type.Number() }) },
      },
    },
    async () => ({ status: "ok" as const, uptime_seconds: Math.round((Date.now() - startedAt) / 1000) }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        tags: ["Operations"],
        summary: "Readiness: every chain reachable and the home chain synced (503 otherwise)",
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const statuses = await Promise.all(
        chains.all().map(async (chain) => {
          const home = chain.chainId === chains.homeChainId;
          try {
            const [syncing, head] = await Promise.all([
              chain.pool.call({ method: "eth_syncing", params: [] }),
              chain.pool.call({ method: "eth_blockNumber", params: [] }),
            ]);
            // eth_syncing answers false when synced, or a progress object while syncing.
            const synced = syncing === false;
            return {
              chain_id: chain.chainId,
              home,
              reachable: true,
              synced,
              head: Number.parseInt(String(head).slice(2), 16),
              ...(synced ? {} : { syncing }),
            };
          } catch (error) {
            return {
              chain_id: chain.chainId,
              home,
              reachable: false,
              synced: false,
              head: null,
              error: (error as Error).message,
            };
          }
        }),
      );
      const homeStatus = statuses.find((s) => s.home);
      const synced = homeStatus?.synced ?? false;
      const ready = synced && statuses.every((s) => s.reachable);
      reply.code(ready ? 200 : 503);
      return { synced, ready, chains: statuses };
    },
  );
};
