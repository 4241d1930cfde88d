/** TypeBox schemas of the standard's parameter types, shared by validation and the OpenAPI document. */
import { Type } from "@sinclair/typebox";

export const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  title: "address",
  description: "20-byte hex address",
});
export const Hash32 = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  title: "hash",
  description: "32-byte hex hash",
});
export const Quantity = Type.String({
  pattern: "^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,63})$",
  title: "quantity",
  description: "hex number without leading zeros",
});
export const Data = Type.String({
  pattern: "^0x([0-9a-fA-F]{2})*$",
  title: "data",
  description: "hex bytes",
});
export const NonEmptyData = Type.String({
  pattern: "^0x([0-9a-fA-F]{2})+$",
  title: "data",
  description: "non-empty hex bytes",
});
export const StorageSlot = Type.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  title: "storage slot",
  description: "hex storage position, up to 32 bytes",
});
export const FilterId = Type.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  title: "filter id",
  description: "hex filter id from eth_newFilter/eth_newBlockFilter/eth_newPendingTransactionFilter",
});
export const BlockTag = Type.Union(
  [
    Type.Literal("latest"),
    Type.Literal("earliest"),
    Type.Literal("pending"),
    Type.Literal("safe"),
    Type.Literal("finalized"),
  ],
  { title: "block tag" },
);
/**
 * A block number as nodes read one: a signed 64-bit integer (geth's `BlockNumber`), so a larger one
 * is refused here with chaingate's error rather than by the node in its own words.
 */
export const BlockNumber = Type.String({
  pattern: "^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,14}|[1-7][0-9a-fA-F]{15})$",
  title: "block number",
  description: "hex block number without leading zeros, at most 0x7fffffffffffffff",
});
export const BlockNumberOrTag = Type.Union([BlockNumber, BlockTag], {
  title: "block number or tag",
  description:
    'hex block number (at most 0x7fffffffffffffff) or "latest", "earliest", "pending", "safe", "finalized"',
});
/** EIP-1898: a number, a tag, a hash, or an object naming either. */
export const BlockSpecifier = Type.Union(
  [
    BlockNumber,
    BlockTag,
    Hash32,
    Type.Object(
      { blockHash: Hash32, requireCanonical: Type.Optional(Type.Boolean()) },
      { additionalProperties: false },
    ),
    Type.Object({ blockNumber: BlockNumber }, { additionalProperties: false }),
  ],
  {
    title: "block",
    description:
      "block number (hex, at most 0x7fffffffffffffff), tag, hash, or {blockHash} / {blockNumber} (EIP-1898)",
  },
);

const AccessList = Type.Array(Type.Object({ address: Address, storageKeys: Type.Array(Hash32) }));

const transactionFields = {
  to: Type.Optional(Type.Union([Address, Type.Null()])),
  gas: Type.Optional(Quantity),
  gasPrice: Type.Optional(Quantity),
  maxFeePerGas: Type.Optional(Quantity),
  maxPriorityFeePerGas: Type.Optional(Quantity),
  maxFeePerBlobGas: Type.Optional(Quantity),
  value: Type.Optional(Quantity),
  data: Type.Optional(Data),
  input: Type.Optional(Data),
  nonce: Type.Optional(Quantity),
  type: Type.Optional(Quantity),
  chainId: Type.Optional(Quantity),
  accessList: Type.Optional(AccessList),
  blobVersionedHashes: Type.Optional(Type.Array(Hash32)),
  authorizationList: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
};

export const CallObject = Type.Object(
  { from: Type.Optional(Address), ...transactionFields },
  { title: "call object", additionalProperties: false },
);
export const TransactionObject = Type.Object(
  { from: Address, ...transactionFields },
  { title: "transaction object", additionalProperties: false },
);
/** eth_getStorageValues' requests: address -> slots (execution-apis caps a request at 1,024 slots in all). */
export const StorageRequests = Type.Record(
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" }),
  Type.Array(Type.String({ pattern: "^0x[0-9a-fA-F]{1,64}$" }), { maxItems: 1024 }),
  {
    title: "storage requests",
    description: "{address: [slot, ...]}, at most 1,024 slots in all",
    // A key that is not an address is refused, not passed on.
    additionalProperties: false,
    maxProperties: 1024,
  },
);

/** EIP-7966's wait in milliseconds: a hex quantity, or the JSON number viem and the EIP's examples send. */
export const SyncTimeout = Type.Union([Quantity, Type.Integer({ minimum: 0, maximum: 86_400_000 })], {
  title: "timeout",
  description: "milliseconds to wait for the receipt (hex or integer); absent or 0: the operator's default",
});
export const StateOverride = Type.Record(Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" }), Type.Unknown(), {
  title: "state override",
  additionalProperties: false,
});

const TopicEntry = Type.Union([Type.Null(), Hash32, Type.Array(Type.Union([Hash32, Type.Null()]))]);
export const FilterObject = Type.Object(
  {
    fromBlock: Type.Optional(BlockNumberOrTag),
    toBlock: Type.Optional(BlockNumberOrTag),
    blockHash: Type.Optional(Hash32),
    address: Type.Optional(Type.Union([Address, Type.Array(Address)])),
    topics: Type.Optional(Type.Array(TopicEntry, { maxItems: 4 })),
  },
  { title: "filter object", additionalProperties: false },
);

export const HydratedFlag = Type.Boolean({
  title: "full transactions",
  description: "true for full objects",
});
export const BlockCount = Type.Union([Quantity, Type.Integer({ minimum: 1, maximum: 1024 })], {
  title: "block count",
});
export const RewardPercentiles = Type.Array(Type.Number({ minimum: 0, maximum: 100 }), {
  title: "reward percentiles",
  maxItems: 100,
});
export const StorageSlots = Type.Array(StorageSlot, { title: "storage keys" });
