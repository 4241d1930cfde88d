/** The Token Management rows that act on one chain: create tokens, transfer them, deploy a contract. */
import { Type } from "@sinclair/typebox";
import type { Abi, Hex } from "viem";
import { badRequest } from "../errors/chaingate-error.js";
import { defineOperation, type Operation } from "../operations/operation.js";
import { parseAddress } from "../operations/parse-input.js";
import { SignerFields, unlockSigner } from "../operations/signed-input.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import type { WalletService } from "../wallets/wallet-service.js";
import { toUint, UintField } from "./amounts.js";
import {
  ContractDeployedSchema,
  ERC20CreatedSchema,
  ERC721CreatedSchema,
  TokensTransferredSchema,
} from "./token-schemas.js";
import type { TokenService } from "./token-service.js";

export const AddressField = (description: string) =>
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: `${description} (20-byte hex address)` });
const TokenName = Type.String({ minLength: 1, maxLength: 100 });
const TokenSymbol = Type.String({ minLength: 1, maxLength: 20 });

export interface TokenOperationDeps {
  wallets: WalletService;
  chains: ChainRegistry;
  tokens: TokenService;
}

export function tokenOperations(deps: TokenOperationDeps): Operation[] {
  return [createERC20(deps), createERC721(deps), transferTokens(deps), deployContract(deps)];
}

/** create_new_ERC20_token */
function createERC20({ wallets, chains, tokens }: TokenOperationDeps): Operation {
  return defineOperation({
    path: "create_new_ERC20_token",
    tag: "Token Management",
    summary: "Creates an ERC20 owned by the wallet's address, with its initial supply minted to it",
    description:
      "Amounts are base units. The token gets the same address on every chain it is transported to. " +
      "Answers address, chain_id and tx_hash.",
    params: Type.Object(
      {
        ...SignerFields,
        name: TokenName,
        symbol: TokenSymbol,
        decimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 36, default: 18 })),
        initial_supply: UintField("minted to the creator"),
      },
      { additionalProperties: false, title: "New ERC20 token" },
    ),
    result: ERC20CreatedSchema,
    signs: true,
    run: async (input, context) =>
      tokens.createERC20(
        await unlockSigner(wallets, chains, input, context),
        {
          name: input.name,
          symbol: input.symbol,
          decimals: input.decimals ?? 18,
          initialSupply: toUint(input.initial_supply, "initial_supply"),
        },
        context.owner,
      ),
  });
}

/** create_new_ERC721_token */
function createERC721({ wallets, chains, tokens }: TokenOperationDeps): Operation {
  return defineOperation({
    path: "create_new_ERC721_token",
    tag: "Token Management",
    summary: "Creates an ERC721 owned by the wallet's address, optionally minting token ids to it",
    params: Type.Object(
      {
        ...SignerFields,
        name: TokenName,
        symbol: TokenSymbol,
        base_uri: Type.Optional(Type.String({ maxLength: 500 })),
        mint: Type.Optional(Type.Array(UintField("token id"), { maxItems: 100 })),
      },
      { additionalProperties: false, title: "New ERC721 token" },
    ),
    result: ERC721CreatedSchema,
    signs: true,
    run: async (input, context) =>
      tokens.createERC721(
        await unlockSigner(wallets, chains, input, context),
        {
          name: input.name,
          symbol: input.symbol,
          baseUri: input.base_uri ?? "",
          mint: (input.mint ?? []).map((id, i) => toUint(id, `mint[${i}]`)),
        },
        context.owner,
      ),
  });
}

/** transfer_tokens */
function transferTokens({ wallets, chains, tokens }: TokenOperationDeps): Operation {
  return defineOperation({
    path: "transfer_tokens",
    tag: "Token Management",
    summary: "Transfers ERC20 `amount` or an ERC721 `token_id` from the wallet's address on one chain",
    params: Type.Object(
      {
        ...SignerFields,
        token: AddressField("token contract"),
        to: AddressField("recipient"),
        amount: Type.Optional(UintField("ERC20 amount")),
        token_id: Type.Optional(UintField("ERC721 token id")),
      },
      { additionalProperties: false, title: "Token transfer" },
    ),
    result: TokensTransferredSchema,
    signs: true,
    run: async (input, context) => {
      const { amount, tokenId } = amountOrId(input);
      return tokens.transfer(
        await unlockSigner(wallets, chains, input, context),
        {
          token: parseAddress(input.token, "token"),
          to: parseAddress(input.to, "to"),
          ...(amount === undefined ? {} : { amount }),
          ...(tokenId === undefined ? {} : { tokenId }),
        },
        context.owner,
      );
    },
  });
}

/** deploy_new_contract */
function deployContract({ wallets, chains, tokens }: TokenOperationDeps): Operation {
  return defineOperation({
    path: "deploy_new_contract",
    tag: "Token Management",
    summary:
      "Deploys any contract from the wallet's address: creation bytecode, and the abi for constructor args",
    params: Type.Object(
      {
        ...SignerFields,
        bytecode: Type.String({ pattern: "^0x([0-9a-fA-F]{2})+$", maxLength: 2 * 49_152 + 2 }),
        abi: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 500 })),
        constructor_args: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 100 })),
      },
      { additionalProperties: false, title: "Contract deployment" },
    ),
    result: ContractDeployedSchema,
    signs: true,
    run: async (input, context) =>
      tokens.deployContract(
        await unlockSigner(wallets, chains, input, context),
        {
          bytecode: input.bytecode as Hex,
          ...(input.abi === undefined ? {} : { abi: input.abi as unknown as Abi }),
          ...(input.constructor_args === undefined ? {} : { constructorArgs: input.constructor_args }),
        },
        context.owner,
      ),
  });
}

/** Exactly one of `amount` (ERC20) and `token_id` (ERC721). */
export function amountOrId(input: { amount?: string | number; token_id?: string | number }): {
  amount?: bigint;
  tokenId?: bigint;
} {
  if ((input.amount === undefined) === (input.token_id === undefined)) {
    throw badRequest("INVALID_PARAMS", "give exactly one of `amount` (ERC20) and `token_id` (ERC721)");
  }
  if (input.amount !== undefined) {
    const amount = toUint(input.amount, "amount");
    if (amount === 0n) throw badRequest("INVALID_AMOUNT", "amount must be greater than 0");
    return { amount };
  }
  return { tokenId: toUint(input.token_id!, "token_id") };
}
