/** The method table: one row per node method drives Native paths, POST /, validation, caching and OpenAPI. */
import { criteriaProblem, type LogCriteria } from "../filters/filter-criteria.js";
import { CLIENT_METHODS } from "./method-rows-client.js";
import { SIGNER_METHODS } from "./method-rows-custody.js";
import { NAMESPACE_METHODS } from "./method-rows-namespaces.js";
import { SPEC_METHODS } from "./method-rows-spec.js";
import type { MethodSpec, Row } from "./method-spec.js";

export type { CachePolicy, MethodHandler, MethodSpec, ParamSpec } from "./method-spec.js";

const REFINERS: Readonly<Record<string, MethodSpec["refine"]>> = {
  eth_getLogs: (params) => criteriaProblem(params[0] as LogCriteria),
  eth_newFilter: (params) => criteriaProblem(params[0] as LogCriteria),
  // One answer holds every slot asked: the execution-apis document caps a request at 1,024.
  eth_getStorageValues: (params) => {
    const slots = Object.values(params[0] as Record<string, unknown[]>).reduce((n, s) => n + s.length, 0);
    return slots > 1024 ? `requests asks ${slots} slots; at most 1024 in one call` : undefined;
  },
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
