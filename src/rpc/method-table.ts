/** The method table: one row per node method drives Native paths, POST /, validation, caching and OpenAPI. */
import { type TSchema, Type } from "@sinclair/typebox";
import { criteriaProblem, type LogCriteria } from "../filters/filter-criteria.js";
import {
  Address,
  BlockCount,
  BlockNumberOrTag,
  BlockSpecifier,
  CallObject,
  Data,
  FilterId,
  FilterObject,
  Hash32,
  HydratedFlag,
  NonEmptyData,
  Quantity,
  RewardPercentiles,
  StateOverride,
  StorageRequests,
  StorageSlot,
  StorageSlots,
  SyncTimeout,
  TransactionObject,
} from "./param-schemas.js";

export interface ParamSpec {
  readonly name: string;
  readonly schema: TSchema;
  readonly required: boolean;
  /** Filled in when the caller leaves the parameter out, so every node sees the same call. */
  readonly default?: unknown;
}

/**
 * How an answer may be reused (issue: gateway core). `static`: never changes for a chain;
 * `immutable`: keyed by hash, never changes once found; `head`: valid for the current head only;
 * `block`: immutable when the block parameter names a hash or an old number, else like `head`.
 */
export type CachePolicy = "none" | "static" | "immutable" | "head" | "block";

/**
 * Where a call is answered: forwarded to the chain's nodes, by the gateway's own filter engine, or
 * signed by the caller's custody wallets (production nodes hold no unlocked accounts).
 */
export type MethodHandler = "upstream" | "filters" | "custody";

export interface MethodSpec {
  readonly name: string;
  readonly summary: string;
  readonly params: readonly ParamSpec[];
  /** One of the 33 operations of the service spec (the rest serve client libraries on POST /). */
  readonly inSpec: boolean;
  readonly handler: MethodHandler;
  readonly cache: CachePolicy;
  /** Checks across parameters that a schema cannot express; returns the problem or undefined. */
  readonly refine?: (params: readonly unknown[]) => string | undefined;
}

const req = (name: string, schema: TSchema): ParamSpec => ({ name, schema, required: true });
const opt = (name: string, schema: TSchema, fill?: unknown): ParamSpec =>
  fill === undefined ? { name, schema, required: false } : { name, schema, required: false, default: fill };
const block = opt("block", BlockSpecifier, "latest");

type Row = [name: string, summary: string, params: ParamSpec[], handler: MethodHandler, cache: CachePolicy];

const SPEC_METHODS: Row[] = [
  [
    "eth_accounts",
    "Returns the caller's custody addresses (wallets oldest first, then by index).",
    [],
    "custody",
    "none",
  ],
  ["eth_blockNumber", "Returns the number of the most recent block.", [], "upstream", "head"],
  ["eth_gasPrice", "Returns the current gas price in wei.", [], "upstream", "head"],
  ["eth_newBlockFilter", "Creates a filter that notifies when a new block arrives.", [], "filters", "none"],
  [
    "eth_newPendingTransactionFilter",
    "Creates a filter that notifies when new pending transactions arrive.",
    [],
    "filters",
    "none",
  ],
  ["eth_protocolVersion", "Returns the current protocol version.", [], "upstream", "static"],
  [
    "eth_syncing",
    "Returns the sync status object, or false when the node is synced.",
    [],
    "upstream",
    "none",
  ],
  [
    "eth_call",
    "Executes a message call immediately without creating a transaction on the chain.",
    [req("transaction", CallObject), block, opt("stateOverride", StateOverride)],
    "upstream",
    "block",
  ],
  [
    "eth_estimateGas",
    "Estimates the gas needed for a transaction without adding it to the chain.",
    [req("transaction", CallObject), block, opt("stateOverride", StateOverride)],
    "upstream",
    "block",
  ],
  [
    "eth_getBalance",
    "Returns the balance of an address.",
    [req("address", Address), block],
    "upstream",
    "block",
  ],
  [
    "eth_getBlockByHash",
    "Returns a block by hash.",
    [req("blockHash", Hash32), opt("hydrated", HydratedFlag, false)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getBlockByNumber",
    "Returns a block by number.",
    [req("block", BlockNumberOrTag), opt("hydrated", HydratedFlag, false)],
    "upstream",
    "block",
  ],
  [
    "eth_getBlockTransactionCountByHash",
    "Returns the number of transactions in the block with the given hash.",
    [req("blockHash", Hash32)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getBlockTransactionCountByNumber",
    "Returns the number of transactions in the block with the given number.",
    [req("block", BlockNumberOrTag)],
    "upstream",
    "block",
  ],
  ["eth_getCode", "Returns the code at an address.", [req("address", Address), block], "upstream", "block"],
  [
    "eth_getFilterChanges",
    "Polls a filter: block hashes, transaction hashes or logs since the last poll.",
    [req("filterId", FilterId)],
    "filters",
    "none",
  ],
  [
    "eth_getFilterLogs",
    "Returns all logs matching the log filter with the given id.",
    [req("filterId", FilterId)],
    "filters",
    "none",
  ],
  [
    "eth_getLogs",
    "Returns all logs matching a filter object.",
    [req("filter", FilterObject)],
    "upstream",
    "none",
  ],
  [
    "eth_getStorageAt",
    "Returns the value at a storage position of an address.",
    [req("address", Address), req("position", StorageSlot), block],
    "upstream",
    "block",
  ],
  [
    "eth_getTransactionByBlockHashAndIndex",
    "Returns a transaction by block hash and transaction index.",
    [req("blockHash", Hash32), req("index", Quantity)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getTransactionByBlockNumberAndIndex",
    "Returns a transaction by block number and transaction index.",
    [req("block", BlockNumberOrTag), req("index", Quantity)],
    "upstream",
    "block",
  ],
  [
    "eth_getTransactionByHash",
    "Returns a transaction by hash.",
    [req("transactionHash", Hash32)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getTransactionCount",
    "Returns the number of transactions sent from an address (its nonce).",
    [req("address", Address), block],
    "upstream",
    "block",
  ],
  [
    "eth_getTransactionReceipt",
    "Returns the receipt of a transaction by hash.",
    [req("transactionHash", Hash32)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getUncleByBlockHashAndIndex",
    "Returns an uncle of a block by block hash and uncle index.",
    [req("blockHash", Hash32), req("index", Quantity)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getUncleByBlockNumberAndIndex",
    "Returns an uncle of a block by block number and uncle index.",
    [req("block", BlockNumberOrTag), req("index", Quantity)],
    "upstream",
    "block",
  ],
  [
    "eth_getUncleCountByBlockHash",
    "Returns the number of uncles in the block with the given hash.",
    [req("blockHash", Hash32)],
    "upstream",
    "immutable",
  ],
  [
    "eth_getUncleCountByBlockNumber",
    "Returns the number of uncles in the block with the given number.",
    [req("block", BlockNumberOrTag)],
    "upstream",
    "block",
  ],
  [
    "eth_newFilter",
    "Creates a log filter from filter options.",
    [req("filter", FilterObject)],
    "filters",
    "none",
  ],
  [
    "eth_sendRawTransaction",
    "Submits a signed transaction; returns its hash.",
    [req("transaction", NonEmptyData)],
    "upstream",
    "none",
  ],
  [
    "eth_sendTransaction",
    "Signs with the caller's custody address `from` and sends, through the transaction pipeline; returns the hash.",
    [req("transaction", TransactionObject)],
    "custody",
    "none",
  ],
  [
    "eth_sign",
    "Signs the EIP-191 personal message of the given bytes with the caller's custody address.",
    [req("address", Address), req("message", Data)],
    "custody",
    "none",
  ],
  [
    "eth_uninstallFilter",
    "Uninstalls the filter with the given id.",
    [req("filterId", FilterId)],
    "filters",
    "none",
  ],
];

/** Methods outside the spec's 33 that ethers, viem, web3.js and cast need to use chaingate as a provider. */
const CLIENT_METHODS: Row[] = [
  ["eth_chainId", "Returns the chain id.", [], "upstream", "static"],
  ["net_version", "Returns the network id.", [], "upstream", "static"],
  ["net_listening", "Returns true while the node listens for peers.", [], "upstream", "none"],
  ["net_peerCount", "Returns the number of peers of the node.", [], "upstream", "none"],
  ["web3_clientVersion", "Returns the node's client version.", [], "upstream", "static"],
  ["web3_sha3", "Returns keccak256 of the given data.", [req("data", Data)], "upstream", "none"],
  ["eth_maxPriorityFeePerGas", "Returns a suggested priority fee per gas.", [], "upstream", "head"],
  ["eth_blobBaseFee", "Returns the blob base fee of the next block.", [], "upstream", "head"],
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
  ],
  ["eth_baseFee", "Returns the base fee per gas of the next block.", [], "upstream", "head"],
  ["eth_coinbase", "Returns the node's coinbase (fee recipient) address.", [], "upstream", "none"],
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

const SendCallsRequest = Type.Object(
  {
    version: Type.Optional(Type.String({ maxLength: 20 })),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from: Address,
    chainId: Quantity,
    atomicRequired: Type.Optional(Type.Boolean()),
    calls: Type.Array(
      Type.Object(
        {
          to: Type.Optional(Address),
          data: Type.Optional(Data),
          value: Type.Optional(Quantity),
          capabilities: Type.Optional(Type.Object({}, { additionalProperties: true })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 64 },
    ),
    capabilities: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object({ optional: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
      ),
    ),
  },
  {
    title: "calls request",
    description:
      "{version, id?, from, chainId, atomicRequired, calls: [{to, data, value}], capabilities?} (EIP-5792)",
    additionalProperties: false,
  },
);

/** The signer methods JSON-RPC clients call on their provider, answered from custody wallets. */
const SIGNER_METHODS: Row[] = [
  [
    "personal_sign",
    "Signs the EIP-191 personal message of the given bytes (or UTF-8 text) with a custody address.",
    [
      req("message", Type.String({ title: "message", description: "hex bytes, or text" })),
      req("address", Address),
      opt(
        "password",
        Type.String({
          title: "password",
          description: "the wallet's password, for this signature only (geth's optional third parameter)",
        }),
      ),
    ],
    "custody",
    "none",
  ],
  [
    "eth_signTypedData_v4",
    "Signs EIP-712 typed data (a JSON string or object) with a custody address.",
    [
      req("address", Address),
      req(
        "typedData",
        Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })], {
          title: "typed data",
          description: "EIP-712 document {types, primaryType, domain, message}, as JSON text or an object",
        }),
      ),
    ],
    "custody",
    "none",
  ],
  [
    "eth_signTransaction",
    "Signs a transaction with a custody address without sending it; returns the raw bytes.",
    [req("transaction", TransactionObject)],
    "custody",
    "none",
  ],
  [
    "eth_signAuthorization",
    "Signs an EIP-7702 authorization with a custody address (the `delegates` policy rule applies; audited); answers it in authorizationList form.",
    [
      req("address", Address),
      req(
        "authorization",
        Type.Object(
          {
            address: Type.Optional(Address),
            contractAddress: Type.Optional(Address),
            chainId: Type.Optional(Type.Union([Quantity, Type.Integer({ minimum: 0 })])),
            nonce: Type.Optional(Type.Union([Quantity, Type.Integer({ minimum: 0 })])),
          },
          {
            title: "authorization request",
            description:
              "address (or contractAddress): the delegate contract; chainId: default this chain, 0 every chain; nonce: default the address's next (queued transactions included)",
            additionalProperties: false,
          },
        ),
      ),
    ],
    "custody",
    "none",
  ],
  [
    "eth_fillTransaction",
    "Fills a transaction as chaingate would sign it (nonce from the ledger, fees, gas with its margin, the policy decision); answers {raw (unsigned), tx, policy}. Other addresses go to the node.",
    [req("transaction", CallObject)],
    "custody",
    "none",
  ],
  [
    "eth_sendTransactionSync",
    "Signs with the caller's custody address `from`, sends through the transaction pipeline, and answers the receipt once mined (eth_sendRawTransactionSync's wait and errors).",
    [req("transaction", TransactionObject), opt("timeout", SyncTimeout)],
    "custody",
    "none",
  ],
  [
    "wallet_getCapabilities",
    "EIP-5792: what wallet_sendCalls offers a custody address on each served chain (calls in order; not atomic).",
    [req("address", Address), opt("chainIds", Type.Array(Quantity, { title: "chain ids", maxItems: 100 }))],
    "custody",
    "none",
  ],
  [
    "wallet_sendCalls",
    "EIP-5792: sends calls from a custody address in order, under consecutive nonces, each through the pipeline and its policies; answers the bundle id.",
    [req("request", SendCallsRequest)],
    "custody",
    "none",
  ],
  [
    "wallet_getCallsStatus",
    "EIP-5792: a bundle's status (100 pending, 200 confirmed, 400 not sent, 500 reverted, 600 partly) and its receipts.",
    [req("id", Type.String({ title: "bundle id", minLength: 1, maxLength: 200 }))],
    "custody",
    "none",
  ],
  [
    "personal_unlockAccount",
    "Unlocks a custody address for signing for `duration` seconds (default and ceiling set by the operator).",
    [
      req("address", Address),
      req("password", Type.String({ title: "password", description: "the wallet's password" })),
      opt(
        "duration",
        Type.Union([Quantity, Type.Integer({ minimum: 0 })], {
          title: "duration",
          description: "seconds; 0 or absent: the default",
        }),
      ),
    ],
    "custody",
    "none",
  ],
  [
    "personal_lockAccount",
    "Ends the unlock of a custody address.",
    [req("address", Address)],
    "custody",
    "none",
  ],
];

const TraceOptions = Type.Object(
  {},
  {
    title: "trace options",
    description: "the node's tracer options ({tracer, tracerConfig, timeout, ...})",
    additionalProperties: true,
  },
);
const TraceTypes = Type.Array(
  Type.Union([Type.Literal("trace"), Type.Literal("vmTrace"), Type.Literal("stateDiff")]),
  {
    title: "trace types",
    maxItems: 3,
  },
);

/**
 * Node debugging and pool methods: answered only by upstreams the operator marks for their
 * namespace (`namespaces` in the config file), with the "trace" per-key budget. Off until marked.
 */
const NAMESPACE_METHODS: Row[] = [
  [
    "debug_traceTransaction",
    "Traces a mined transaction (the node's tracers).",
    [req("transactionHash", Hash32), opt("options", TraceOptions)],
    "upstream",
    "none",
  ],
  [
    "debug_traceCall",
    "Traces a call on a block's state.",
    [req("transaction", CallObject), block, opt("options", TraceOptions)],
    "upstream",
    "none",
  ],
  [
    "debug_traceBlockByNumber",
    "Traces every transaction of a block by number.",
    [req("block", BlockNumberOrTag), opt("options", TraceOptions)],
    "upstream",
    "none",
  ],
  [
    "debug_traceBlockByHash",
    "Traces every transaction of a block by hash.",
    [req("blockHash", Hash32), opt("options", TraceOptions)],
    "upstream",
    "none",
  ],
  [
    "trace_transaction",
    "Parity-style traces of a mined transaction.",
    [req("transactionHash", Hash32)],
    "upstream",
    "none",
  ],
  ["trace_block", "Parity-style traces of a block.", [req("block", BlockNumberOrTag)], "upstream", "none"],
  [
    "trace_call",
    "Parity-style traces of a call.",
    [req("transaction", CallObject), req("traceTypes", TraceTypes), block],
    "upstream",
    "none",
  ],
  [
    "trace_replayTransaction",
    "Replays a mined transaction with the given trace types.",
    [req("transactionHash", Hash32), req("traceTypes", TraceTypes)],
    "upstream",
    "none",
  ],
  ["txpool_status", "Counts the node's pending and queued transactions.", [], "upstream", "none"],
  ["txpool_content", "Lists the node's pending and queued transactions.", [], "upstream", "none"],
  ["txpool_inspect", "Summarises the node's pending and queued transactions.", [], "upstream", "none"],
  [
    "txpool_contentFrom",
    "Lists the node's pending and queued transactions of one sender.",
    [req("address", Address)],
    "upstream",
    "none",
  ],
];

const REFINERS: Readonly<Record<string, MethodSpec["refine"]>> = {
  eth_getLogs: (params) => criteriaProblem(params[0] as LogCriteria),
  eth_newFilter: (params) => criteriaProblem(params[0] as LogCriteria),
};

function toSpec(inSpec: boolean) {
  return ([name, summary, params, handler, cache]: Row): MethodSpec => {
    const refine = REFINERS[name];
    return { name, summary, params, inSpec, handler, cache, ...(refine ? { refine } : {}) };
  };
}

export const METHODS: readonly MethodSpec[] = [
  ...SPEC_METHODS.map(toSpec(true)),
  ...CLIENT_METHODS.map(toSpec(false)),
  ...SIGNER_METHODS.map(toSpec(false)),
  ...NAMESPACE_METHODS.map(toSpec(false)),
];

export const METHODS_BY_NAME: ReadonlyMap<string, MethodSpec> = new Map(METHODS.map((m) => [m.name, m]));

/**
 * Methods whose answer is a quantity, a hash, a boolean or a short string, whatever the chain holds:
 * they never flood, so a key that was answered its share of large reads lately (the answer budget's
 * rate) may still ask them. Every other method may answer a large value and waits for the share.
 */
export const SMALL_ANSWERS: ReadonlySet<string> = new Set([
  "eth_blockNumber",
  "eth_chainId",
  "net_version",
  "net_listening",
  "net_peerCount",
  "web3_clientVersion",
  "web3_sha3",
  "eth_protocolVersion",
  "eth_syncing",
  "eth_gasPrice",
  "eth_maxPriorityFeePerGas",
  "eth_blobBaseFee",
  "eth_baseFee",
  "eth_coinbase",
  "eth_getBalance",
  "eth_getTransactionCount",
  "eth_getStorageAt",
  "eth_estimateGas",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
  "eth_newFilter",
  "eth_newBlockFilter",
  "eth_newPendingTransactionFilter",
  "eth_uninstallFilter",
  "eth_sendRawTransaction",
  "eth_sendTransaction",
  "eth_sign",
  "personal_sign",
  "eth_signTypedData_v4",
  "personal_unlockAccount",
  "personal_lockAccount",
]);
