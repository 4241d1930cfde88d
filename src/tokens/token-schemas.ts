/** What the Token Management operations answer (the OpenAPI types of their results). */
import { Type } from "@sinclair/typebox";
import { AddressString, TxHashString, UintString } from "../operations/record-schema.js";

const made = {
  owner: AddressString("the creating custody address, the token's owner"),
  chain_id: Type.Integer({ description: "the chain it was created on" }),
  tx_hash: TxHashString("the creating transaction"),
};

export const ERC20CreatedSchema = Type.Object(
  {
    address: AddressString("the token; the same on every chain it is transported to"),
    standard: Type.Literal("ERC20"),
    name: Type.String(),
    symbol: Type.String(),
    decimals: Type.Integer({ minimum: 0, maximum: 36 }),
    initial_supply: UintString("minted to the owner, in base units"),
    ...made,
  },
  { title: "ERC20 created" },
);

export const ERC721CreatedSchema = Type.Object(
  {
    address: AddressString("the token; the same on every chain it is transported to"),
    standard: Type.Literal("ERC721"),
    name: Type.String(),
    symbol: Type.String(),
    base_uri: Type.String(),
    minted: Type.Array(UintString("a token id minted to the owner")),
    ...made,
  },
  { title: "ERC721 created" },
);

export const TokensTransferredSchema = Type.Object(
  {
    tx_hash: TxHashString(),
    chain_id: Type.Integer(),
    token: AddressString("the token contract"),
    standard: Type.Union([Type.Literal("ERC20"), Type.Literal("ERC721")]),
    from: AddressString("the sending custody address"),
    to: AddressString("the recipient"),
    amount: Type.Optional(UintString("ERC20: base units moved")),
    token_id: Type.Optional(UintString("ERC721: the token id moved")),
  },
  { title: "Tokens transferred" },
);

export const ContractDeployedSchema = Type.Object(
  {
    address: AddressString("the new contract (from the sender and its nonce)"),
    chain_id: Type.Integer(),
    tx_hash: TxHashString("the deploying transaction"),
  },
  { title: "Contract deployed" },
);
