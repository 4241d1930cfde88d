/** TypeBox schemas of the Transactions group. */
import { Type } from "@sinclair/typebox";
import { AddressString, Nullable, Timestamp, TxHashString, UintString } from "../operations/record-schema.js";
import { TX_STATES } from "./list-transfers.js";

export const CreateTransactionBody = Type.Object(
  {
    wallet_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "wallet to sign with (required)" }),
    ),
    password: Type.Optional(
      Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { description: "the wallet's password" }),
    ),
    index: Type.Optional(
      Type.Union([Type.Integer({ format: "int32", minimum: 0, maximum: 2 ** 31 - 1 }), Type.Null()], {
        description: "address index in the wallet (default 0)",
      }),
    ),
    transaction: Type.Object(
      {
        to: Type.Optional(
          Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
            description: "destination address; absent or null deploys `data` as a contract",
          }),
        ),
        data: Type.Optional(
          Type.String({ maxLength: 2 * 1024 * 1024, description: "0x-hex call or contract data" }),
        ),
        value: Type.Optional(
          Type.String({ maxLength: 80, description: "wei as a decimal string (0x hex accepted)" }),
        ),
        authorizations: Type.Optional(
          Type.Array(
            Type.Object(
              {
                delegate: Type.String({
                  pattern: "^0x[0-9a-fA-F]{40}$",
                  description: "the contract the address delegates to (EIP-7702)",
                }),
                index: Type.Optional(
                  Type.Integer({
                    minimum: 0,
                    maximum: 2 ** 31 - 1,
                    description: "the wallet address that authorizes (default: the sender's own)",
                  }),
                ),
                chain_id: Type.Optional(
                  Type.Integer({ minimum: 0, description: "default: the chain sent on; 0: every chain" }),
                ),
                nonce: Type.Optional(
                  Type.Integer({
                    minimum: 0,
                    description:
                      "default: the authority's next (the sender's own: the transaction's nonce + 1)",
                  }),
                ),
              },
              { additionalProperties: false },
            ),
            {
              minItems: 1,
              maxItems: 16,
              description:
                "EIP-7702: signed by this wallet's addresses (the `delegates` policy rule applies, each audited); the transaction is type 4",
            },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    chain_id: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.String({ maxLength: 20 })], {
        description: "send on another configured chain (default: the home chain; X-Chain-Id works too)",
      }),
    ),
    wait_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400_000,
        description:
          "wait up to this many milliseconds (at most the operator's --sync-send-max-ms) and answer the receipt too; " +
          "past it, 504 RECEIPT_TIMEOUT with `tx_hash` (the transaction stays tracked). Not part of the Idempotency-Key's body",
      }),
    ),
  },
  { additionalProperties: false, title: "Create transaction" },
);

export const TransactionResult = Type.Object(
  {
    tx_hash: Type.String(),
    receipt: Type.Optional(
      Type.Object(
        {
          transactionHash: Type.String(),
          blockHash: Type.String(),
          blockNumber: Type.String(),
          status: Type.Optional(Type.String({ description: '"0x1" success, "0x0" reverted' })),
        },
        {
          additionalProperties: true,
          description: "with `wait_ms`: the receipt as the node answers eth_getTransactionReceipt",
        },
      ),
    ),
  },
  { title: "Transaction result" },
);

export const TransferFilterSchema = Type.Object(
  {
    wallet_id: Type.Optional(Type.String({ maxLength: 200 })),
    address: Type.Optional(Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
    state: Type.Optional(Type.Union(TX_STATES.map((s) => Type.Literal(s)))),
    chain_id: Type.Optional(Type.Integer({ minimum: 1 })),
    kind: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false, title: "Transfer filter" },
);

export const TransferRecordSchema = Type.Object(
  {
    id: Type.String({ description: "chaingate's id of the transaction" }),
    kind: Type.String({
      description: "what made it: transfer, create_new_ERC20_token, trasport_token, transport_delivery, ...",
    }),
    wallet_id: Nullable(
      Type.String({ description: "the signing custody wallet (none for the operator key)" }),
    ),
    index: Nullable(Type.Integer({ description: "the address's index in its wallet" })),
    chain_id: Type.Integer(),
    from: AddressString("the signing address"),
    to: Nullable(AddressString("the recipient or contract (none for a deployment)")),
    value: UintString("wei sent"),
    nonce: Type.Integer(),
    tx_hash: TxHashString(),
    replaced_by: Nullable(TxHashString("the fee bump or cancel that replaced it")),
    state: Type.Union(TX_STATES.map((s) => Type.Literal(s))),
    block_number: Nullable(Type.Integer()),
    block_hash: Nullable(TxHashString("the block's hash")),
    error: Nullable(Type.String({ description: "why it failed, in words" })),
    details: Type.Unknown({
      description:
        "what the operation recorded with it (token, amount, transport_id, via, ...); null for none",
    }),
    created_at: Timestamp("signed"),
    updated_at: Timestamp("last changed"),
  },
  { title: "Transfer" },
);

export const TransferPageSchema = Type.Object(
  {
    transfers: Type.Array(TransferRecordSchema),
    next_cursor: Nullable(Type.String({ description: "pass back as `cursor` for the next page" })),
  },
  { title: "Transfers page" },
);
