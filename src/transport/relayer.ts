/** The relayer: reads MessageSent from every chain's endpoint and delivers each message to its destination. */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import {
  decodeAbiParameters,
  decodeEventLog,
  encodeEventTopics,
  encodeFunctionData,
  type Hex,
  keccak256,
  numberToHex,
} from "viem";
import { MessageEndpoint } from "../contracts/artifacts.generated.js";
import { readContract, waitForReceipt } from "../contracts/chain-calls.js";
import { decodeContractError, explainRevert, revertDataOf } from "../contracts/contract-errors.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { TransportKind, TransportsTable } from "../store/schema.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { newTransportRow } from "./transport-row.js";

export interface RelayerOptions {
  store: Store;
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  system: SystemContracts;
  logger: Logger;
  intervalMs: number;
  /** A source event is relayed once its block has this many confirmations (1: mined). */
  confirmations: number;
  leaseMs?: number;
  maxAttempts?: number;
  now?: () => number;
}

const KINDS: readonly TransportKind[] = ["ERC20", "ERC721", "MESSAGE"];
/** How far back a first scan of a chain looks, and how many blocks one eth_getLogs covers. */
const FIRST_SCAN_DEPTH = 50_000;
const SCAN_SPAN = 2_000;
const TOKEN_BODY = [
  {
    type: "tuple",
    components: [
      { name: "token", type: "address" },
      { name: "standard", type: "uint8" },
      { name: "name", type: "string" },
      { name: "symbol", type: "string" },
      { name: "decimals", type: "uint8" },
      { name: "baseUri", type: "string" },
      { name: "creator", type: "address" },
      { name: "homeChainId", type: "uint64" },
      { name: "salt", type: "bytes32" },
    ],
  },
  { type: "uint256" },
  { type: "bytes" },
] as const;
const SENT_TOPIC = encodeEventTopics({ abi: MessageEndpoint.abi, eventName: "MessageSent" })[0];

interface Log {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  transactionHash: Hex;
}

export class Relayer {
  private readonly instance = randomUUID();
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: RelayerOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    const loop = () => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(loop, this.options.intervalMs);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: scan every chain, then deliver what is due. Errors are logged; the next pass retries. */
  async tick(): Promise<void> {
    for (const chain of this.options.chains.all()) {
      try {
        await this.scan(chain);
      } catch (error) {
        this.options.logger.warn({ err: error, chain: chain.chainId }, "relayer scan failed; will retry");
      }
    }
    try {
      await this.checkSources();
      await this.deliverDue();
      await this.refundDue();
    } catch (error) {
      this.options.logger.warn({ err: error }, "relayer pass failed; will retry");
    }
  }

  private async blockNumber(chain: Chain): Promise<number> {
    const head = Number(BigInt(String(await chain.pool.call({ method: "eth_blockNumber", params: [] }))));
    chain.head?.observe(head);
    return head;
  }

  /** Reads MessageSent events up to the confirmed head, recording each as a transport (once, by id). */
  private async scan(chain: Chain): Promise<void> {
    const { store, system } = this.options;
    const endpoint = system.endpoint.toLowerCase();
    const safe = (await this.blockNumber(chain)) - (this.options.confirmations - 1);
    let cursor = await store.db
      .selectFrom("relayer_cursors")
      .select("next_block")
      .where("chain_id", "=", chain.chainId)
      .where("endpoint", "=", endpoint)
      .executeTakeFirst();
    if (!cursor) {
      await store.db
        .insertInto("relayer_cursors")
        .values({
          chain_id: chain.chainId,
          endpoint,
          next_block: Math.max(0, safe - FIRST_SCAN_DEPTH),
          updated_at: this.now(),
        })
        .onConflict((oc) => oc.columns(["chain_id", "endpoint"]).doNothing())
        .execute();
      cursor = { next_block: Math.max(0, safe - FIRST_SCAN_DEPTH) };
    }
    for (let from = cursor.next_block; from <= safe; ) {
      const to = Math.min(safe, from + SCAN_SPAN - 1);
      const logs = (await chain.pool.call({
        method: "eth_getLogs",
        params: [
          {
            address: system.endpoint,
            topics: [SENT_TOPIC],
            fromBlock: numberToHex(from),
            toBlock: numberToHex(to),
          },
        ],
      })) as Log[];
      for (const log of logs) await this.recordSent(chain, log);
      await store.db
        .updateTable("relayer_cursors")
        .set({ next_block: to + 1, updated_at: this.now() })
        .where("chain_id", "=", chain.chainId)
        .where("endpoint", "=", endpoint)
        .where("next_block", "<", to + 1)
        .execute();
      from = to + 1;
    }
  }

  private async recordSent(chain: Chain, log: Log): Promise<void> {
    const event = decodeEventLog({
      abi: MessageEndpoint.abi,
      eventName: "MessageSent",
      data: log.data,
      topics: log.topics as [Hex],
    });
    if (event.args === undefined) return;
    const { id, destinationChainId, sender, kind, recipient, body } = event.args;
    const transportKind = KINDS[kind] ?? "MESSAGE";
    let token: string | null = null;
    let amount: string | null = null;
    let tokenId: string | null = null;
    let payloadHash: Hex | null = keccak256(body);
    let withData = 0;
    if (transportKind !== "MESSAGE") {
      const [info, value, data] = decodeAbiParameters(TOKEN_BODY, body);
      token = info.token;
      if (transportKind === "ERC20") amount = value.toString();
      else tokenId = value.toString();
      withData = data === "0x" ? 0 : 1;
      payloadHash = data === "0x" ? null : keccak256(data);
    }
    const now = this.now();
    const blockNumber = Number(BigInt(log.blockNumber));
    await this.options.store.db
      .insertInto("transports")
      .values(
        newTransportRow(
          {
            id,
            kind: transportKind,
            with_data: withData,
            source_chain_id: chain.chainId,
            destination_chain_id: Number(destinationChainId),
            sender,
            recipient,
            token,
            amount,
            token_id: tokenId,
            payload_hash: payloadHash,
            source_tx_hash: log.transactionHash,
            body,
            source_block: blockNumber,
          },
          now,
        ),
      )
      .onConflict((oc) =>
        oc.column("id").doUpdateSet({
          body,
          source_block: blockNumber,
          source_tx_hash: log.transactionHash,
          updated_at: now,
        }),
      )
      .execute();
  }

  /** A transport whose source transaction failed will never be seen on chain: it fails with the reason. */
  private async checkSources(): Promise<void> {
    const { store } = this.options;
    const waiting = await store.db
      .selectFrom("transports")
      .select(["id", "source_tx_hash"])
      .where("state", "=", "sent")
      .where("source_block", "is", null)
      .where("source_tx_hash", "is not", null)
      .limit(100)
      .execute();
    for (const row of waiting) {
      const final = await this.finalTransaction(row.source_tx_hash!);
      if (final && (final.state === "failed" || final.state === "dropped")) {
        await this.fail(
          row.id,
          `source transaction ${final.tx_hash} ${final.state}: ${final.error ?? "no reason given"}`,
        );
      }
    }
  }

  /** Follows fee-bump replacements to the transaction that stands for the one first sent. */
  private async finalTransaction(hash: string) {
    let row = await this.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("tx_hash", "=", hash)
      .executeTakeFirst();
    for (let hops = 0; row?.state === "replaced" && row.replaced_by !== null && hops < 20; hops++) {
      row = await this.options.store.db
        .selectFrom("transactions")
        .selectAll()
        .where("id", "=", row.replaced_by)
        .executeTakeFirst();
    }
    return row;
  }

  private async deliverDue(): Promise<void> {
    for (const row of await this.due("deliver")) {
      await this.underLease(
        row,
        () => this.deliver(row),
        async (error) => {
          this.options.logger.warn({ err: error, transport: row.id }, "delivery attempt failed; will retry");
          await this.note(row.id, { error: (error as Error).message.slice(0, 500) });
        },
      );
    }
  }

  /** Transports waiting for a delivery (seen on the source chain) or a refund, and not leased, oldest first. */
  private due(work: "deliver" | "refund"): Promise<TransportsTable[]> {
    const now = this.now();
    return this.options.store.db
      .selectFrom("transports")
      .selectAll()
      .$if(work === "deliver", (q) =>
        q.where("state", "in", ["sent", "delivering"]).where("source_block", "is not", null),
      )
      .$if(work === "refund", (q) => q.where("state", "=", "failed").where("refund_state", "=", "pending"))
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
      .orderBy("created_at")
      .limit(20)
      .execute();
  }

  /** Runs `work` on a transport only while this instance holds its lease; faults are retried next pass. */
  private async underLease(
    row: TransportsTable,
    work: () => Promise<void>,
    onFault: (error: unknown) => Promise<void>,
  ): Promise<void> {
    if (!(await this.claim(row.id))) return;
    try {
      await work();
    } catch (error) {
      await onFault(error);
    } finally {
      await this.options.store.db
        .updateTable("transports")
        .set({ lease_owner: null, lease_until: null })
        .where("id", "=", row.id)
        .where("lease_owner", "=", this.instance)
        .execute();
    }
  }

  /** Two instances never work on one transport at once; a crashed instance's lease runs out. */
  private async claim(id: string): Promise<boolean> {
    const now = this.now();
    const result = await this.options.store.db
      .updateTable("transports")
      .set({ lease_owner: this.instance, lease_until: now + this.leaseMs })
      .where("id", "=", id)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async deliver(row: TransportsTable): Promise<void> {
    const { chains, system, pipeline, store } = this.options;
    const destination = chains.get(row.destination_chain_id);
    if (!destination)
      return this.fail(row.id, `destination chain ${row.destination_chain_id} is not configured`);
    const id = row.id as Hex;
    if (
      await readContract(destination, system.endpoint, MessageEndpoint.abi, "executed", [
        BigInt(row.source_chain_id),
        id,
      ])
    ) {
      return this.markDelivered(row, destination);
    }
    // A delivery already out (ours, or stored by an instance that crashed before noting it) is waited for.
    const outstanding = await store.db
      .selectFrom("transactions")
      .select(["tx_hash", "state", "error"])
      .where("kind", "=", "transport_delivery")
      .where("chain_id", "=", destination.chainId)
      .where("metadata", "like", `%"transport_id":"${id}"%`)
      .orderBy("created_at", "desc")
      .execute();
    const pending = outstanding.find(
      (tx) => tx.state === "queued" || tx.state === "sent" || tx.state === "mined",
    );
    if (pending) {
      if (row.destination_tx_hash !== pending.tx_hash || row.state !== "delivering") {
        await this.note(row.id, { state: "delivering", destination_tx_hash: pending.tx_hash });
      }
      return;
    }
    if (row.attempts >= this.maxAttempts) {
      const last = outstanding[0];
      return this.fail(
        row.id,
        `not delivered after ${row.attempts} attempts${last?.error ? `: ${last.error}` : ""}`,
      );
    }
    const searchFrom = row.search_from_block ?? (await this.blockNumber(destination));
    let submitted: Awaited<ReturnType<TransactionPipeline["submit"]>>;
    try {
      submitted = await pipeline.submit({
        chain: destination,
        account: system.operator,
        walletId: null,
        addressIndex: null,
        to: system.endpoint,
        data: encodeFunctionData({
          abi: MessageEndpoint.abi,
          functionName: "deliver",
          args: [
            id,
            BigInt(row.source_chain_id),
            KINDS.indexOf(row.kind),
            row.sender as Hex,
            row.recipient as Hex,
            row.body as Hex,
          ],
        }),
        value: 0n,
        kind: "transport_delivery",
        metadata: { transport_id: id, source_chain_id: row.source_chain_id },
      });
    } catch (error) {
      if (error instanceof ChaingateError && error.code === "EXECUTION_REVERTED") {
        const decoded = decodeContractError(
          (error.data as { revert_data?: unknown } | undefined)?.revert_data,
        );
        // Executed meanwhile (another instance): the next pass records it as delivered.
        if (decoded?.name === "AlreadyExecuted") return;
        // A deterministic refusal (the recipient's callback reverts, say): another try would fail the same way.
        const explained = explainRevert(error);
        return this.fail(
          row.id,
          `delivery refused: ${explained === error ? "reverted without a reason" : (explained as Error).message}`,
          row.kind === "MESSAGE" ? null : "pending",
          revertDataOf(error) ?? null,
        );
      }
      throw error;
    }
    await this.note(row.id, {
      state: "delivering",
      destination_tx_hash: submitted.txHash,
      attempts: row.attempts + 1,
      search_from_block: searchFrom,
      error: null,
    });
  }

  /** Executed on the destination: find which transaction did it (ours, or another relayer's). */
  /** The MessageDelivered event of a transport on its destination, when it was executed there. */
  private async findDelivery(row: TransportsTable, destination: Chain): Promise<Log | undefined> {
    const head = await this.blockNumber(destination);
    const logs = (await destination.pool.call({
      method: "eth_getLogs",
      params: [
        {
          address: this.options.system.endpoint,
          topics: encodeEventTopics({
            abi: MessageEndpoint.abi,
            eventName: "MessageDelivered",
            args: { id: row.id as Hex, sourceChainId: BigInt(row.source_chain_id) },
          }),
          fromBlock: numberToHex(row.search_from_block ?? Math.max(0, head - FIRST_SCAN_DEPTH)),
          toBlock: "latest",
        },
      ],
    })) as Log[];
    return logs.at(-1);
  }

  /** Executed on the destination: find which transaction did it (ours, or another relayer's). */
  private async markDelivered(row: TransportsTable, destination: Chain): Promise<void> {
    const delivery = await this.findDelivery(row, destination);
    const hash = delivery?.transactionHash ?? row.destination_tx_hash;
    // Clients read the destination as soon as this says delivered: the cache must know that block.
    if (delivery !== undefined) destination.head?.observe(Number(BigInt(delivery.blockNumber)));
    const now = this.now();
    await this.options.store.db
      .updateTable("transports")
      .set({
        state: "delivered",
        destination_tx_hash: hash,
        delivered_at: now,
        updated_at: now,
        error: null,
        refund_state: null,
      })
      .where("id", "=", row.id)
      .where("state", "!=", "delivered")
      .execute();
    this.options.logger.info({ transport: row.id, tx: hash }, "transport delivered");
  }

  /** Refused token transports: closed on the destination (cancel), then minted back to the sender. */
  private async refundDue(): Promise<void> {
    for (const row of await this.due("refund")) {
      await this.underLease(
        row,
        () => this.refund(row),
        async (error) => {
          this.options.logger.warn({ err: error, transport: row.id }, "refund attempt failed; will retry");
        },
      );
    }
  }

  /**
   * Each step checks the chain first, so a crash anywhere only repeats what is left: the cancel makes
   * a late delivery impossible before anything is minted back, and the source refunds an id once.
   */
  private async refund(row: TransportsTable): Promise<void> {
    const { chains, system, pipeline } = this.options;
    const destination = chains.get(row.destination_chain_id);
    const source = chains.get(row.source_chain_id);
    if (!destination || !source || row.body === null) return;
    const id = row.id as Hex;
    const sourceChainId = BigInt(row.source_chain_id);
    const operation = (chain: Chain, data: Hex, kind: string) =>
      pipeline
        .submit({
          chain,
          account: system.operator,
          walletId: null,
          addressIndex: null,
          to: system.endpoint,
          data,
          value: 0n,
          kind,
          metadata: { transport_id: id },
        })
        .then((submitted) => waitForReceipt(chain, submitted.txHash));
    if (
      !(await readContract(destination, system.endpoint, MessageEndpoint.abi, "executed", [
        sourceChainId,
        id,
      ]))
    ) {
      try {
        await operation(
          destination,
          encodeFunctionData({ abi: MessageEndpoint.abi, functionName: "cancel", args: [id, sourceChainId] }),
          "transport_cancel",
        );
      } catch (error) {
        const revert = (error as ChaingateError).data as { revert_data?: unknown } | undefined;
        if (decodeContractError(revert?.revert_data)?.name !== "AlreadyExecuted") throw error;
      }
    }
    // Executed by a delivery after all (one was still in flight): it is delivered, nothing to give back.
    if (await this.findDelivery(row, destination)) return this.markDelivered(row, destination);
    let hash = row.refund_tx_hash;
    if (!(await readContract(source, system.endpoint, MessageEndpoint.abi, "refunded", [id]))) {
      const receipt = await operation(
        source,
        encodeFunctionData({ abi: MessageEndpoint.abi, functionName: "refund", args: [id, row.body as Hex] }),
        "transport_refund",
      );
      if (receipt.status !== "0x1") throw new Error(`refund transaction ${receipt.transactionHash} failed`);
      hash = receipt.transactionHash;
    }
    await this.note(row.id, { refund_state: "done", refund_tx_hash: hash });
    this.options.logger.info({ transport: row.id, tx: hash }, "refused transport refunded to its sender");
  }

  private async fail(
    id: string,
    reason: string,
    refund: "pending" | null = null,
    revertData: string | null = null,
  ): Promise<void> {
    this.options.logger.warn({ transport: id, reason }, "transport failed");
    // The raw revert data is kept whole (bounded by the node's answer limit) for whoever decodes it better.
    await this.note(id, {
      state: "failed",
      error: reason.slice(0, 1000),
      revert_data: revertData,
      refund_state: refund,
    });
  }

  private async note(id: string, changes: Partial<TransportsTable>): Promise<void> {
    await this.options.store.db
      .updateTable("transports")
      .set({ ...changes, updated_at: this.now() })
      .where("id", "=", id)
      .execute();
  }
}
