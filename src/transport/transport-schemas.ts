/** What the transport operations answer (the OpenAPI types of their results). */
import { Type } from "@sinclair/typebox";
import {
  AddressString,
  HexString,
  Nullable,
  Timestamp,
  TxHashString,
  UintString,
} from "../operations/record-schema.js";
import { TRANSPORT_KINDS, TRANSPORT_STATES } from "./list-transports.js";

const Kind = Type.Union(TRANSPORT_KINDS.map((k) => Type.Literal(k)));

export const TransportReceiptSchema = Type.Object(
  {
    transport_id: HexString("the transport's 32-byte id: follow it with list_all_transports"),
    kind: Kind,
    state: Type.Literal("sent"),
    source_chain_id: Type.Integer(),
    destination_chain_id: Type.Integer(),
    tx_hash: TxHashString("the source transaction (burn, or message)"),
  },
  { title: "Transport sent" },
);

export const TransportRecordSchema = Type.Object(
  {
    id: HexString("the transport's 32-byte id"),
    kind: Kind,
    with_data: Type.Boolean({
      description: "a token transport that calls onTokenTransport on the recipient",
    }),
    source_chain_id: Type.Integer(),
    destination_chain_id: Type.Integer(),
    sender: AddressString("who sent it on the source chain"),
    recipient: AddressString("the recipient, or the receiving contract of a message"),
    token: Nullable(AddressString("the token (none for a message)")),
    amount: Nullable(UintString("ERC20: base units")),
    token_id: Nullable(UintString("ERC721: the token id")),
    payload_hash: Nullable(HexString("keccak256 of the message or data")),
    state: Type.Union(TRANSPORT_STATES.map((s) => Type.Literal(s))),
    error: Nullable(Type.String({ description: "why it failed or is held, in words" })),
    revert_data: Nullable(HexString("a refused delivery's raw revert data")),
    source_tx_hash: Nullable(TxHashString("the source transaction")),
    destination_tx_hash: Nullable(TxHashString("the delivery")),
    attempts: Type.Integer({ description: "delivery attempts so far" }),
    created_at: Timestamp("recorded"),
    updated_at: Timestamp("last changed"),
    delivered_at: Nullable(Timestamp("delivered")),
    refund_state: Nullable(Type.Union([Type.Literal("pending"), Type.Literal("done")])),
    refund_tx_hash: Nullable(TxHashString("the refund on the source chain")),
    source_confirmations: Nullable(
      Type.Integer({ description: "upstreams of the source chain that confirmed the source event" }),
    ),
    release_at: Nullable(Timestamp("queued on its lane's limit: when it will be delivered")),
    refund_at: Nullable(Timestamp("queued on its lane's limit: when it will be refunded instead")),
  },
  { title: "Transport" },
);

export const TransportPageSchema = Type.Object(
  {
    transports: Type.Array(TransportRecordSchema),
    next_cursor: Nullable(Type.String({ description: "pass back as `cursor` for the next page" })),
  },
  { title: "Transports page" },
);
