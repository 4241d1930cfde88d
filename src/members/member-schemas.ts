/** The member record as register_new_member and list_all_members answer it (the OpenAPI type of their results). */
import { Type } from "@sinclair/typebox";
import { AddressString, Nullable, Timestamp, TxHashString } from "../operations/record-schema.js";
import { MEMBER_ROLES, MEMBER_STATUSES } from "./member-service.js";

export const MemberRecordSchema = Type.Object(
  {
    id: Type.Integer({ description: "the member's id in the registry contract" }),
    name: Type.String(),
    chain_id: Type.Integer({ description: "the member's chain" }),
    role: Type.Union(MEMBER_ROLES.map((r) => Type.Literal(r))),
    status: Type.Union(MEMBER_STATUSES.map((s) => Type.Literal(s))),
    owner: AddressString("the address that owns the member's record"),
    created_at: Timestamp("registered"),
    updated_at: Timestamp("last changed"),
    tx_hash: Nullable(TxHashString("the registering transaction")),
  },
  { title: "Member" },
);

export const MemberListSchema = Type.Array(MemberRecordSchema, { title: "Members" });
