/** Rows of debug_*, trace_* and txpool_*: only upstreams marked for the namespace answer them. */
import { Type } from "@sinclair/typebox";
import { block, opt, type Row, req } from "./method-spec.js";
import { Address, BlockNumberOrTag, CallObject, Hash32 } from "./param-schemas.js";

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
export const NAMESPACE_METHODS: Row[] = [
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
