/** Params for each of the spec's 33 Native paths, from what a test set up on a chain: one table for every node the suite runs. */
import { DEV_ACCOUNT, DEV_ACCOUNT_2, EMITTER_TOPIC } from "./evm-fixtures.js";

export interface SpecCallContext {
  /** A contract that emits EMITTER_TOPIC on every call, and a log filter installed on it. */
  emitter: string;
  logFilter: string;
  /** A block filter the call table uninstalls. */
  filterForUninstall: string;
  /** The receipt of a call to the emitter. */
  emit: { blockHash: string; blockNumber: string; transactionHash: string };
  /** A signed transfer from DEV_ACCOUNT at its next nonce. */
  raw: string;
  /** An unlocked custody address. */
  custody: string;
}

export function specCalls(c: SpecCallContext): Record<string, unknown[] | undefined> {
  const { emitter, logFilter, emit, raw, custody } = c;
  const { blockHash, blockNumber } = emit;
  return {
    eth_accounts: undefined,
    eth_blockNumber: undefined,
    eth_gasPrice: undefined,
    eth_newBlockFilter: undefined,
    eth_newPendingTransactionFilter: undefined,
    eth_protocolVersion: undefined,
    eth_syncing: undefined,
    eth_call: [{ to: emitter }, "latest"],
    eth_estimateGas: [{ from: DEV_ACCOUNT, to: emitter }, "latest"],
    eth_getBalance: [DEV_ACCOUNT, "latest"],
    eth_getBlockByHash: [blockHash, false],
    eth_getBlockByNumber: [blockNumber, true],
    eth_getBlockTransactionCountByHash: [blockHash],
    eth_getBlockTransactionCountByNumber: [blockNumber],
    eth_getCode: [emitter, "latest"],
    eth_getFilterChanges: [logFilter],
    eth_getFilterLogs: [logFilter],
    eth_getLogs: [{ fromBlock: "0x0", toBlock: "latest", topics: [EMITTER_TOPIC] }],
    eth_getStorageAt: [emitter, "0x0", "latest"],
    eth_getTransactionByBlockHashAndIndex: [blockHash, "0x0"],
    eth_getTransactionByBlockNumberAndIndex: [blockNumber, "0x0"],
    eth_getTransactionByHash: [emit.transactionHash],
    eth_getTransactionCount: [DEV_ACCOUNT, "latest"],
    eth_getTransactionReceipt: [emit.transactionHash],
    eth_getUncleByBlockHashAndIndex: [blockHash, "0x0"],
    eth_getUncleByBlockNumberAndIndex: [blockNumber, "0x0"],
    eth_getUncleCountByBlockHash: [blockHash],
    eth_getUncleCountByBlockNumber: [blockNumber],
    eth_newFilter: [{ fromBlock: "latest", topics: [EMITTER_TOPIC] }],
    eth_sendRawTransaction: [raw],
    eth_sendTransaction: [{ from: custody, to: DEV_ACCOUNT_2, value: "0x1" }],
    eth_sign: [custody, "0xdeadbeef"],
    eth_uninstallFilter: [c.filterForUninstall],
  };
}
