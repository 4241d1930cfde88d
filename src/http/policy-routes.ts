/** REST for signing policies (admin keys) and the audit log (admins: all of it; users: their own). */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import { listAudit } from "../audit/audit-log.js";
import { Nullable } from "../operations/record-schema.js";
import { PolicyRulesSchema } from "../policies/policy-rules.js";
import type { PolicyStore } from "../policies/policy-store.js";
import type { Store } from "../store/database.js";
import { ProblemSchema } from "../wallets/wallet-schemas.js";
import { ownerOf, requireAdmin } from "./access-control.js";
import { useRestBodies } from "./rest-body.js";
import { useStrictValidation } from "./strict-validation.js";

export interface PolicyRoutesOptions {
  policies: PolicyStore;
  store: Store;
}

const PolicySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    wallet_id: Type.Union([Type.String(), Type.Null()]),
    api_key_id: Type.Union([Type.String(), Type.Null()]),
    rules: PolicyRulesSchema,
    created_by: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
  },
  { title: "policy" },
);

const CreatePolicyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    wallet_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    api_key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    rules: PolicyRulesSchema,
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

const AuditEntrySchema = Type.Object(
  {
    id: Type.String(),
    created_at: Type.String(),
    api_key_id: Nullable(Type.String()),
    wallet_id: Nullable(Type.String()),
    address: Nullable(Type.String()),
    chain_id: Type.Union([Type.Integer(), Type.Null()]),
    operation: Type.String(),
    to: Nullable(Type.String()),
    value: Nullable(Type.String()),
    token: Nullable(Type.String()),
    token_amount: Nullable(Type.String()),
    selector: Nullable(Type.String()),
    decision: Type.Union([Type.Literal("allowed"), Type.Literal("denied"), Type.Literal("change")]),
    rule: Nullable(Type.String()),
    policy_id: Nullable(Type.String()),
    tx_hash: Nullable(Type.String()),
    detail: Type.Unknown(),
  },
  { title: "audit entry" },
);

const AuditQuery = Type.Object(
  {
    api_key_id: Type.Optional(Type.String({ maxLength: 100 })),
    wallet_id: Type.Optional(Type.String({ maxLength: 100 })),
    address: Type.Optional(Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
    chain_id: Type.Optional(Type.Integer({ minimum: 1 })),
    operation: Type.Optional(Type.String({ maxLength: 100 })),
    decision: Type.Optional(
      Type.Union([Type.Literal("allowed"), Type.Literal("denied"), Type.Literal("change")]),
    ),
    since: Type.Optional(Type.Integer({ minimum: 0, description: "epoch milliseconds, inclusive" })),
    until: Type.Optional(Type.Integer({ minimum: 0, description: "epoch milliseconds, inclusive" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema };

const ADMIN_ONLY = "policies are managed with an admin API key";
const admin = (request: FastifyRequest) => requireAdmin(request, ADMIN_ONLY);

export const policyRoutes: FastifyPluginAsync<PolicyRoutesOptions> = async (app, { policies, store }) => {
  useStrictValidation(app);
  useRestBodies(app);
  signingPolicyRoutes(app, policies);
  auditRoutes(app, store);
};

/** Creating, listing, reading and removing signing policies. */
function signingPolicyRoutes(app: FastifyInstance, policies: PolicyRoutesOptions["policies"]): void {
  app.post<{ Body: Static<typeof CreatePolicyBody> }>(
    "/policies",
    {
      schema: {
        tags: ["Policies"],
        summary: "Creates a policy bound to a wallet, an API key, or both (admin)",
        description:
          "Every policy that applies to a signature must allow it. docs/policies-and-webhooks.md explains each rule.",
        operationId: "createPolicy",
        body: CreatePolicyBody,
        response: { 200: PolicySchema, ...problems },
      },
    },
    async (request) => policies.create(request.body, admin(request)),
  );

  app.get(
    "/policies",
    {
      schema: {
        tags: ["Policies"],
        summary: "Lists every policy (admin)",
        operationId: "listPolicies",
        response: { 200: Type.Array(PolicySchema), ...problems },
      },
    },
    async (request) => {
      admin(request);
      return policies.list();
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    "/policies/:id",
    {
      schema: {
        tags: ["Policies"],
        summary: "One policy (admin)",
        operationId: "getPolicy",
        params: IdParams,
        response: { 200: PolicySchema, ...problems },
      },
    },
    async (request) => {
      admin(request);
      return policies.get(request.params.id);
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    "/policies/:id",
    {
      schema: {
        tags: ["Policies"],
        summary: "Deletes a policy (admin); the deletion is in the audit log",
        operationId: "deletePolicy",
        params: IdParams,
        response: { 204: Type.Null(), ...problems },
      },
    },
    async (request, reply) => {
      await policies.delete(request.params.id, admin(request));
      return reply.code(204).send();
    },
  );
}

/** The audit log of signing decisions. */
function auditRoutes(app: FastifyInstance, store: PolicyRoutesOptions["store"]): void {
  app.get<{ Querystring: Static<typeof AuditQuery> }>(
    "/audit",
    {
      schema: {
        tags: ["Policies"],
        summary: "The audit log, newest first: an admin sees every entry, a user key its own",
        operationId: "listAudit",
        querystring: AuditQuery,
        response: {
          200: Type.Object({ entries: Type.Array(AuditEntrySchema), next_cursor: Nullable(Type.String()) }),
          ...problems,
        },
      },
    },
    async (request) => {
      const tenant = request.tenant;
      const onlyKey =
        tenant !== null && tenant !== undefined && tenant.role !== "admin" ? ownerOf(request) : undefined;
      return listAudit(store, request.query, onlyKey);
    },
  );
}
