/** The Members group's rows in the operation table: register_new_member and list_all_members. */
import { Type } from "@sinclair/typebox";
import { defineOperation, type Operation } from "../operations/operation.js";
import { parseAddress } from "../operations/parse-input.js";
import { ChainIdField } from "../operations/signed-input.js";
import { parseChainSelector } from "../upstream/chain-registry.js";
import { MemberListSchema, MemberRecordSchema } from "./member-schemas.js";
import { MEMBER_ROLES, MEMBER_STATUSES, type MemberService } from "./member-service.js";

const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "20-byte hex address" });

export function memberOperations(members: MemberService): Operation[] {
  return [
    defineOperation({
      path: "register_new_member",
      tag: "Members",
      summary:
        "Registers a member (name, chain, role) in the registry on the home chain, signed by the operator key",
      description:
        "Answers the member: id, name, chain_id, role, status ACTIVE, owner, created_at, tx_hash. The chain must be " +
        "configured and the name unused (MEMBER_NAME_TAKEN otherwise). `owner` defaults to the operator's address.",
      params: Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 200 }),
          chain_id: ChainIdField,
          role: Type.Union(MEMBER_ROLES.map((r) => Type.Literal(r))),
          owner: Type.Optional(Address),
        },
        { additionalProperties: false, title: "New member" },
      ),
      result: MemberRecordSchema,
      signs: true,
      admin: true,
      run: (input, context) =>
        members.register(
          {
            name: input.name,
            chain_id: parseChainSelector(input.chain_id, "chain_id")!,
            role: input.role,
            ...(input.owner === undefined ? {} : { owner: parseAddress(input.owner, "owner") }),
          },
          context,
        ),
    }),
    defineOperation({
      path: "list_all_members",
      tag: "Members",
      summary: "Lists the registered members, optionally only those with a status, role or chain",
      params: Type.Object(
        {
          status: Type.Optional(Type.Union(MEMBER_STATUSES.map((s) => Type.Literal(s)))),
          role: Type.Optional(Type.Union(MEMBER_ROLES.map((r) => Type.Literal(r)))),
          chain_id: Type.Optional(ChainIdField),
        },
        { additionalProperties: false, title: "Member filter" },
      ),
      result: MemberListSchema,
      signs: false,
      run: (input) =>
        members.list({
          ...(input.status === undefined ? {} : { status: input.status }),
          ...(input.role === undefined ? {} : { role: input.role }),
          ...(input.chain_id === undefined
            ? {}
            : { chain_id: parseChainSelector(input.chain_id, "chain_id")! }),
        }),
    }),
  ];
}
