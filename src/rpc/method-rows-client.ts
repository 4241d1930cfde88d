/** Rows for what client libraries ask beyond the spec, and the rest of the execution-apis document. */
import { Type } from "@sinclair/typebox";
import { block, opt, type Row, req } from "./method-spec.js";
import {
  Address,
  BlockCount,
  BlockNumberOrTag,
  BlockSpecifier,
  CallObject,
  Data,
  NonEmptyData,
  RewardPercentiles,
  StorageRequests,
  StorageSlots,
  SyncTimeout,
} from "./param-schemas.js";

/** Methods outside the spec's 33 that ethers, viem, web3.js and cast need to use chaingate as a provider. */
export const CLIENT_METHODS: Row[] = [
  ["eth_chainId", "Returns the chain id.", [], "upstream", "static", ["small", "shared"]],
  ["net_version", "Returns the network id.", [], "upstream", "static", ["small"]],
  ["net_listening", "Returns true while the node listens for peers.", [], "upstream", "none", ["small"]],
  ["net_peerCount", "Returns the number of peers of the node.", [], "upstream", "none", ["small"]],
  ["web3_clientVersion", "Returns the node's client version.", [], "upstream", "static", ["small"]],
  ["web3_sha3", "Returns keccak256 of the given data.", [req("data", Data)], "upstream", "none", ["small"]],
  [
    "eth_maxPriorityFeePerGas",
    "Returns a suggested priority fee per gas.",
    [],
    "upstream",
    "head",
    ["small", "shared"],
  ],
  ["eth_blobBaseFee", "Returns the blob base fee of the next block.", [], "upstream", "head", ["small"]],
  [
    "eth_feeHistory",
    "Returns base fees, gas ratios and reward percentiles of recent blocks.",
    [
      req("blockCount", BlockCount),
      req("newestBlock", BlockNumberOrTag),
      opt("rewardPercentiles", RewardPercentiles),
    ],
    "upstream",
    "block",
  ],
  [
    "eth_getBlockReceipts",
    "Returns all receipts of a block.",
    [req("block", BlockSpecifier)],
    "upstream",
    "block",
  ],
  [
    "eth_simulateV1",
    "Simulates calls in one or more blocks on top of a block, with state and block overrides (passed to the node).",
    [
      req(
        "payload",
        Type.Object(
          { blockStateCalls: Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 256 }) },
          {
            title: "simulation payload",
            description:
              "{blockStateCalls, traceTransfers?, validation?, returnFullTransactions?} (execution-apis)",
            additionalProperties: true,
          },
        ),
      ),
      block,
    ],
    "upstream",
    "none",
  ],
  [
    "eth_sendRawTransactionSync",
    "Submits a signed transaction and answers its receipt once mined (EIP-7966), over any node; error code 4 when the timeout passes first.",
    [req("transaction", NonEmptyData), opt("timeout", SyncTimeout)],
    "upstream",
    "none",
    ["send"],
  ],
  ["eth_baseFee", "Returns the base fee per gas of the next block.", [], "upstream", "head", ["small"]],
  ["eth_coinbase", "Returns the node's coinbase (fee recipient) address.", [], "upstream", "none", ["small"]],
  ["eth_capabilities", "Returns what history and state the node serves.", [], "upstream", "none"],
  ["eth_config", "Returns the chain's fork configuration (current, next and last).", [], "upstream", "head"],
  [
    "eth_getStorageValues",
    "Returns the values of several storage slots of several addresses at one block.",
    [req("requests", StorageRequests), block],
    "upstream",
    "block",
  ],
  [
    "eth_getBlockAccessList",
    "Returns the block-level access list (EIP-7928) of a block.",
    [req("block", BlockSpecifier)],
    "upstream",
    "block",
  ],
  [
    "eth_createAccessList",
    "Returns the access list a transaction would use.",
    [req("transaction", CallObject), block],
    "upstream",
    "block",
  ],
  [
    "eth_getProof",
    "Returns the Merkle proof of an account and storage slots.",
    [req("address", Address), req("storageKeys", StorageSlots), block],
    "upstream",
    "block",
  ],
];
