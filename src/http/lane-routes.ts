/** REST for per-lane transport limits: admins set and remove them; any key may read them. */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { LaneLimits } from "../transport/lane-limits.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { ProblemSchema } from "../wallets/wallet-schemas.js";
import { requireAdmin } from "./access-control.js";
import { useRestBodies } from "./rest-body.js";
import { useStrictValidation } from "./strict-validation.js";

export interface LaneRoutesOptions {
  lanes: LaneLimits;
  chains: ChainRegistry;
}

const ChainId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "token address on the source chain",
});
/** A positive uint256 in decimal, so that any token's base units fit. */
const Capacity = Type.String({
  pattern: "^[1-9][0-9]{0,77}$",
  description: "base units (ERC721: tokens) that may cross per period; also the most that crosses at once",
});
const Seconds = (description: string) => Type.Integer({ minimum: 1, maximum: 31_536_000, description });

const LaneParams = Type.Object({
  source_chain_id: Type.String({ pattern: "^[1-9][0-9]{0,15}$" }),
  destination_chain_id: Type.String({ pattern: "^[1-9][0-9]{0,15}$" }),
  token: Address,
});

const SetLaneBody = Type.Object(
  {
    source_chain_id: ChainId,
    destination_chain_id: ChainId,
    token: Address,
    capacity: Capacity,
    period_seconds: Seconds("the period over which `capacity` refills"),
    refund_after_seconds: Type.Optional(
      Type.Union([
        Seconds("a transport that would wait longer than this is refunded to its sender at this deadline"),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

const LaneLimitSchema = Type.Object(
  {
    source_chain_id: Type.Integer(),
    destination_chain_id: Type.Integer(),
    token: Type.String(),
    capacity: Type.String(),
    period_seconds: Type.Number(),
    refund_after_seconds: Type.Union([Type.Number(), Type.Null()]),
    available: Type.String({ description: "what may cross now; negative while queued transports wait" }),
    created_by: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: "lane limit" },
);

const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema };
const ADMIN_ONLY = "lane limits are set with an admin API key";

export const laneRoutes: FastifyPluginAsync<LaneRoutesOptions> = async (app, { lanes, chains }) => {
  useStrictValidation(app);
  useRestBodies(app);
  const admin = (request: FastifyRequest) => requireAdmin(request, ADMIN_ONLY);
  const known = (chainId: number, field: string) => {
    if (chains.get(chainId) === undefined)
      throw new ChaingateError(
        `${field} ${chainId} is not a configured chain (configured: ${chains
          .all()
          .map((c) => c.chainId)
          .join(", ")})`,
        { code: "INVALID_LANE_LIMIT" },
      );
  };

  app.put<{ Body: Static<typeof SetLaneBody> }>(
    "/lanes",
    {
      schema: {
        tags: ["Transports"],
        summary: "Sets the limit of a lane (source chain, destination chain, token) (admin)",
        description:
          'A token bucket shared by every instance: transports over it are queued with `release_at` in list_all_transports, or refunded after `refund_after_seconds`. docs/api.md, "Lane limits".',
        operationId: "setLaneLimit",
        body: SetLaneBody,
        response: { 200: LaneLimitSchema, ...problems },
      },
    },
    async (request) => {
      const by = admin(request);
      known(request.body.source_chain_id, "source_chain_id");
      known(request.body.destination_chain_id, "destination_chain_id");
      return lanes.set(request.body, by);
    },
  );

  app.get(
    "/lanes",
    {
      schema: {
        tags: ["Transports"],
        summary: "Lists every lane limit and what each lets cross now",
        operationId: "listLaneLimits",
        response: { 200: Type.Array(LaneLimitSchema), ...problems },
      },
    },
    async () => lanes.list(),
  );

  app.delete<{ Params: Static<typeof LaneParams> }>(
    "/lanes/:source_chain_id/:destination_chain_id/:token",
    {
      schema: {
        tags: ["Transports"],
        summary: "Removes a lane's limit (admin); transports already queued keep their release time",
        operationId: "deleteLaneLimit",
        params: LaneParams,
        response: { 204: Type.Null(), ...problems },
      },
    },
    async (request, reply) => {
      admin(request);
      const { source_chain_id, destination_chain_id, token } = request.params;
      await lanes.delete({
        source_chain_id: Number(source_chain_id),
        destination_chain_id: Number(destination_chain_id),
        token,
      });
      return reply.code(204).send();
    },
  );
};
