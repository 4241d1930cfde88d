/** Liveness (`/healthz`) and readiness (`/readyz`, from the readiness monitor's background checks). */
import { Type } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import type { ReadinessMonitor } from "../upstream/readiness.js";

export interface HealthRoutesOptions {
  readiness: ReadinessMonitor;
  startedAt: number;
}

const ChainStatus = Type.Object({
  chain_id: Type.Integer(),
  home: Type.Boolean(),
  reachable: Type.Boolean(),
  synced: Type.Boolean(),
  head: Type.Union([Type.Integer(), Type.Null()]),
  healthy_upstreams: Type.Integer({ description: "verified upstreams not in a cool-down" }),
  upstreams: Type.Integer(),
});

const Readiness = Type.Object({
  synced: Type.Boolean({ description: "true when the home chain's node reports it is not syncing" }),
  ready: Type.Boolean(),
  chains: Type.Array(ChainStatus),
  problems: Type.Optional(
    Type.Array(Type.String(), { description: "why this instance is not ready besides its chains" }),
  ),
});

export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (
  app,
  { readiness, startedAt },
) => {
  app.get(
    "/healthz",
    {
      schema: {
        tags: ["Operations"],
        summary: "Liveness: the process answers",
        operationId: "healthz",
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
        operationId: "readyz",
        summary: "Readiness: every chain has a healthy upstream and the home chain is synced (503 otherwise)",
        description:
          "Computed in the background (each upstream's head poll and one eth_syncing per chain a second), never by a node call per request.",
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      // No node call here: a flood of probes costs nothing upstream.
      const snapshot = readiness.snapshot();
      reply.code(snapshot.ready ? 200 : 503);
      return snapshot;
    },
  );
};
