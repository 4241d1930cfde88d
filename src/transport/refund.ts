/** Gives a refused token transport back: closed on the destination (cancel), then minted back to its sender. */

import type { Logger } from "pino";
import { encodeFunctionData, type Hex } from "viem";
import { MessageEndpoint } from "../contracts/artifacts.generated.js";
import { readContract, waitForReceipt } from "../contracts/chain-calls.js";
import { decodeContractError } from "../contracts/contract-errors.js";
import { submitAsOperator } from "../contracts/operator-submit.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import type { ChaingateError } from "../errors/chaingate-error.js";
import type { TransportsTable } from "../store/schema.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import type { Delivery } from "./delivery.js";
import type { TransportRecords } from "./transport-records.js";

export interface RefundOptions {
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  system: SystemContracts;
  records: TransportRecords;
  delivery: Delivery;
  logger: Logger;
}

export class Refund {
  constructor(private readonly options: RefundOptions) {}

  /**
   * Each step checks the chain first, so a crash anywhere only repeats what is left: the cancel makes
   * a late delivery impossible before anything is minted back, and the source refunds an id once.
   */
  async refund(row: TransportsTable): Promise<void> {
    const { chains, system, delivery } = this.options;
    const destination = chains.get(row.destination_chain_id);
    const source = chains.get(row.source_chain_id);
    if (!destination || !source || row.body === null) return;
    const id = row.id as Hex;
    if (!(await delivery.executed(row, destination))) {
      try {
        await this.call(
          row,
          destination,
          encodeFunctionData({
            abi: MessageEndpoint.abi,
            functionName: "cancel",
            args: [id, BigInt(row.source_chain_id)],
          }),
          "transport_cancel",
        );
      } catch (error) {
        const revert = (error as ChaingateError).data as { revert_data?: unknown } | undefined;
        if (decodeContractError(revert?.revert_data)?.name !== "AlreadyExecuted") throw error;
      }
    }
    // Executed by a delivery after all (one was still in flight): it is delivered, nothing to give back.
    if (await delivery.deliveredTx(row, destination)) return delivery.markDelivered(row, destination);
    let hash = row.refund_tx_hash;
    if (!(await readContract(source, system.endpoint, MessageEndpoint.abi, "refunded", [id]))) {
      const receipt = await this.call(
        row,
        source,
        encodeFunctionData({ abi: MessageEndpoint.abi, functionName: "refund", args: [id, row.body as Hex] }),
        "transport_refund",
      );
      if (receipt.status !== "0x1") throw new Error(`refund transaction ${receipt.transactionHash} failed`);
      hash = receipt.transactionHash;
    }
    await this.options.records.note(row.id, { refund_state: "done", refund_tx_hash: hash });
    this.options.logger.info({ transport: row.id, tx: hash }, "refused transport refunded to its sender");
  }

  /** One operator call for the transport, waited for: the next step reads what it changed. */
  private async call(row: TransportsTable, chain: Chain, data: Hex, kind: string) {
    const { txHash } = await submitAsOperator(this.options.pipeline, this.options.system.operator, {
      chain,
      to: this.options.system.endpoint,
      data,
      kind,
      metadata: { transport_id: row.id },
      transportId: row.id,
    });
    return waitForReceipt(chain, txHash);
  }
}
