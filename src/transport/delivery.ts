/** Delivers a transport seen on its source: one `deliver` on the destination, never two, until it executed. */
import { encodeFunctionData, type Hex } from "viem";
import { MessageEndpoint } from "../contracts/artifacts.generated.js";
import { readContract } from "../contracts/chain-calls.js";
import { decodeContractError, explainRevert, revertDataOf } from "../contracts/contract-errors.js";
import { submitAsOperator } from "../contracts/operator-submit.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { TransportsTable } from "../store/schema.js";
import { transactionsOfTransport } from "../tx/transaction-lookup.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { headOf } from "../upstream/node-reads.js";
import { deliveredEvent, FIRST_SCAN_DEPTH, KINDS } from "./endpoint-events.js";
import type { SourceGate } from "./source-gate.js";
import type { TransportRecords } from "./transport-records.js";

export interface DeliveryOptions {
  store: Store;
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  system: SystemContracts;
  records: TransportRecords;
  gate: SourceGate;
  maxAttempts: number;
}

export class Delivery {
  constructor(private readonly options: DeliveryOptions) {}

  async deliver(row: TransportsTable): Promise<void> {
    const { chains, records } = this.options;
    const destination = chains.get(row.destination_chain_id);
    if (!destination)
      return records.fail(row.id, `destination chain ${row.destination_chain_id} is not configured`);
    if (await this.executed(row, destination)) return this.markDelivered(row, destination);
    // A delivery already out (ours, or stored by an instance that crashed before noting it) is waited for.
    const outstanding = await transactionsOfTransport(
      this.options.store,
      row.id,
      destination.chainId,
      "transport_delivery",
    );
    const pending = outstanding.find(
      (tx) => tx.state === "queued" || tx.state === "sent" || tx.state === "mined",
    );
    if (pending) {
      if (row.destination_tx_hash !== pending.tx_hash || row.state !== "delivering") {
        await records.note(row.id, { state: "delivering", destination_tx_hash: pending.tx_hash });
      }
      return;
    }
    if (row.attempts >= this.options.maxAttempts) {
      const last = outstanding[0];
      return records.fail(
        row.id,
        `not delivered after ${row.attempts} attempts${last?.error ? `: ${last.error}` : ""}`,
      );
    }
    // Nothing is sent until a quorum of the source chain's upstreams shows the event final, and its lane lets it by.
    const admitted = await this.options.gate.admit(row);
    if (admitted === undefined) return;
    return this.send(admitted, destination);
  }

  /** One `deliver` transaction for a transport the gate admitted (its body is the quorum's). */
  private async send(row: TransportsTable, destination: Chain): Promise<void> {
    const { system, records } = this.options;
    if (row.destination_chain_id !== destination.chainId) {
      // The quorum's event names another destination than the record did: the next pass goes there.
      return;
    }
    const searchFrom = row.search_from_block ?? (await headOf(destination));
    let txHash: Hex;
    try {
      ({ txHash } = await submitAsOperator(this.options.pipeline, system.operator, {
        chain: destination,
        to: system.endpoint,
        data: encodeFunctionData({
          abi: MessageEndpoint.abi,
          functionName: "deliver",
          args: [
            row.id as Hex,
            BigInt(row.source_chain_id),
            KINDS.indexOf(row.kind),
            row.sender as Hex,
            row.recipient as Hex,
            row.body as Hex,
          ],
        }),
        kind: "transport_delivery",
        metadata: { transport_id: row.id, source_chain_id: row.source_chain_id },
        transportId: row.id,
      }));
    } catch (error) {
      return this.refused(row, error);
    }
    await records.note(row.id, {
      state: "delivering",
      destination_tx_hash: txHash,
      attempts: row.attempts + 1,
      search_from_block: searchFrom,
      error: null,
    });
  }

  /** The destination's endpoint has executed this transport (by us or by another relayer). */
  executed(row: TransportsTable, destination: Chain): Promise<boolean> {
    const { system } = this.options;
    return readContract(destination, system.endpoint, MessageEndpoint.abi, "executed", [
      BigInt(row.source_chain_id),
      row.id as Hex,
    ]) as Promise<boolean>;
  }

  /** Executed on the destination: its MessageDelivered event names the transaction that did it. */
  async deliveredTx(row: TransportsTable, destination: Chain) {
    const fromBlock = row.search_from_block ?? Math.max(0, (await headOf(destination)) - FIRST_SCAN_DEPTH);
    return deliveredEvent(destination, this.options.system.endpoint, row, fromBlock);
  }

  async markDelivered(row: TransportsTable, destination: Chain): Promise<void> {
    const delivery = await this.deliveredTx(row, destination);
    // Clients read the destination as soon as this says delivered: the cache must know that block.
    if (delivery !== undefined) destination.head?.observe(Number(BigInt(delivery.blockNumber)));
    await this.options.records.delivered(row.id, delivery?.transactionHash ?? row.destination_tx_hash);
  }

  /** A deliver that reverts: already executed (another instance), or refused for good (and refunded). */
  private async refused(row: TransportsTable, error: unknown): Promise<void> {
    if (!(error instanceof ChaingateError) || error.retryable) throw error;
    if (error.code !== "EXECUTION_REVERTED") {
      // Refused for a reason another node would give too (an opcode the chain's EVM lacks, a gas
      // limit): counted, and after the bounded attempts failed (and refunded) with the reason.
      const attempts = row.attempts + 1;
      if (attempts < this.options.maxAttempts) {
        await this.options.records.note(row.id, { attempts, error: error.message.slice(0, 500) });
        return;
      }
      return this.options.records.fail(
        row.id,
        `delivery refused ${attempts} times: ${error.message}`,
        row.kind === "MESSAGE" ? null : "pending",
      );
    }
    const decoded = decodeContractError((error.data as { revert_data?: unknown } | undefined)?.revert_data);
    // Executed meanwhile (another instance): the next pass records it as delivered.
    if (decoded?.name === "AlreadyExecuted") return;
    // A deterministic refusal (the recipient's callback reverts, say): another try would fail the same way.
    const explained = explainRevert(error);
    return this.options.records.fail(
      row.id,
      `delivery refused: ${explained === error ? "reverted without a reason" : (explained as Error).message}`,
      row.kind === "MESSAGE" ? null : "pending",
      revertDataOf(error) ?? null,
    );
  }
}
