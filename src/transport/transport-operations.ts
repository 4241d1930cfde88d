/** The Token Management rows that cross chains: the three transports and list_all_transports. */
import { Type } from "@sinclair/typebox";
import type { Hex } from "viem";
import { defineOperation, type Operation, type OperationContext } from "../operations/operation.js";
import { parseAddress } from "../operations/parse-input.js";
import { ChainIdField, SignerFields, unlockSigner } from "../operations/signed-input.js";
import type { Store } from "../store/database.js";
import { UintField } from "../tokens/amounts.js";
import { AddressField, amountOrId } from "../tokens/token-operations.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { parseChainSelector } from "../upstream/chain-registry.js";
import type { WalletService } from "../wallets/wallet-service.js";
import {
  listTransports,
  TRANSPORT_KINDS,
  TRANSPORT_STATES,
  type TransportFilter,
} from "./list-transports.js";
import { TransportPageSchema, TransportReceiptSchema } from "./transport-schemas.js";
import type { TransportService } from "./transport-service.js";

const HexBytes = (description: string, maxBytes: number) =>
  Type.String({ pattern: "^0x([0-9a-fA-F]{2})*$", maxLength: 2 + 2 * maxBytes, description });

export interface TransportOperationDeps {
  wallets: WalletService;
  chains: ChainRegistry;
  transports: TransportService;
  store: Store;
}

export function transportOperations(deps: TransportOperationDeps): Operation[] {
  return [...tokenTransports(deps), messageTransport(deps), listAllTransports(deps.store)];
}

const TOKEN_FIELDS = {
  ...SignerFields,
  token: AddressField("token created by create_new_ERC20_token or create_new_ERC721_token"),
  to: AddressField("recipient on the destination chain"),
  amount: Type.Optional(UintField("ERC20 amount")),
  token_id: Type.Optional(UintField("ERC721 token id")),
  destination_chain_id: ChainIdField,
};

interface TokenTransportInput {
  wallet_id: string;
  password?: string;
  index?: number;
  chain_id?: number | string;
  token: string;
  to: string;
  amount?: string | number;
  token_id?: string | number;
  destination_chain_id: number | string;
  data?: string;
}

async function sendToken(
  { wallets, chains, transports }: TransportOperationDeps,
  input: TokenTransportInput,
  context: OperationContext,
) {
  const { amount, tokenId } = amountOrId(input);
  return transports.sendToken(
    await unlockSigner(wallets, chains, input, context),
    {
      token: parseAddress(input.token, "token"),
      to: parseAddress(input.to, "to"),
      ...(amount === undefined ? {} : { amount }),
      ...(tokenId === undefined ? {} : { tokenId }),
      destinationChainId: parseChainSelector(input.destination_chain_id, "destination_chain_id")!,
      data: (input.data ?? "0x").toLowerCase() as Hex,
    },
    context.owner,
  );
}

/** trasport_token (the spec's spelling), its correctly spelled alias, and the form with data. */
function tokenTransports(deps: TransportOperationDeps): Operation[] {
  /** The spec's path and its correctly spelled alias: one operation under two names. */
  const tokenTransport = (path: string, summary: string) =>
    defineOperation({
      path,
      tag: "Token Management",
      summary,
      description:
        "Burns on the source chain; chaingate's relayer mints on the destination, once. Answers transport_id and " +
        "the source tx_hash; follow it with list_all_transports.",
      params: Type.Object(TOKEN_FIELDS, { additionalProperties: false, title: "Token transport" }),
      result: TransportReceiptSchema,
      signs: true,
      run: (input, context) => sendToken(deps, input, context),
    });
  return [
    tokenTransport(
      "trasport_token",
      "Moves ERC20 `amount` or an ERC721 `token_id` to `to` on another member's chain (path spelled as in the spec)",
    ),
    tokenTransport(
      "transport_token",
      "Alias of /trasport_token (the spec's spelling), for callers who spell it correctly; same body and answer",
    ),
    defineOperation({
      path: "transport_token_with_data",
      tag: "Token Management",
      summary:
        "Like trasport_token, then calls onTokenTransport(sourceChainId, sender, token, amountOrId, data) on `to`",
      params: Type.Object(
        { ...TOKEN_FIELDS, data: HexBytes("bytes passed to the recipient's callback", 32_768) },
        { additionalProperties: false, title: "Token transport with data" },
      ),
      result: TransportReceiptSchema,
      signs: true,
      run: (input, context) => sendToken(deps, input, context),
    }),
  ];
}

function messageTransport({ wallets, chains, transports }: TransportOperationDeps): Operation {
  return defineOperation({
    path: "transport_arbitrary_message",
    tag: "Token Management",
    summary:
      "Delivers `payload` to onMessage(sourceChainId, sender, payload) of `destination` on another member's chain",
    params: Type.Object(
      {
        ...SignerFields,
        destination_chain_id: ChainIdField,
        destination: AddressField("receiving contract"),
        payload: HexBytes("the message bytes", 32_768),
      },
      { additionalProperties: false, title: "Message transport" },
    ),
    result: TransportReceiptSchema,
    signs: true,
    run: async (input, context) =>
      transports.sendMessage(
        await unlockSigner(wallets, chains, input, context),
        {
          destinationChainId: parseChainSelector(input.destination_chain_id, "destination_chain_id")!,
          destination: parseAddress(input.destination, "destination"),
          payload: input.payload.toLowerCase() as Hex,
        },
        context.owner,
      ),
  });
}

function listAllTransports(store: Store): Operation {
  return defineOperation({
    path: "list_all_transports",
    tag: "Token Management",
    summary:
      "Lists transports, newest first: kind, chains, sender, recipient, amount or id, state, both tx hashes",
    description:
      "`result` is `{transports: [...], next_cursor}`; pass next_cursor back as `cursor` for the next page.",
    params: Type.Object(
      {
        state: Type.Optional(Type.Union(TRANSPORT_STATES.map((s) => Type.Literal(s)))),
        kind: Type.Optional(Type.Union(TRANSPORT_KINDS.map((k) => Type.Literal(k)))),
        source_chain_id: Type.Optional(Type.Integer({ minimum: 1 })),
        destination_chain_id: Type.Optional(Type.Integer({ minimum: 1 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        cursor: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false, title: "Transport filter" },
    ),
    result: TransportPageSchema,
    signs: false,
    run: (input, context) => listTransports(store, input as TransportFilter, context.owner),
  });
}
