/** EIP-5792 for custody addresses: wallet_getCapabilities, wallet_sendCalls (in order, consecutive nonces) and wallet_getCallsStatus from the tracker. */
import { randomBytes } from "node:crypto";
import { getAddress, type Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { invalidParams } from "../errors/rpc-errors.js";
import type { Store } from "../store/database.js";
import type { CallBundlesTable, TransactionsTable } from "../store/schema.js";
import { finalOf } from "../tx/transaction-lookup.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { receiptOf } from "../upstream/node-reads.js";
import type { CustodyAccounts } from "./custody-accounts.js";
import { unknownAccount } from "./custody-errors.js";
import type { TransactionObject } from "./transaction-request.js";

/** Most calls in one bundle: each is a signature and a transaction of its own. */
const MAX_CALLS = 16;
const VERSION = "2.0.0";

export interface SendCallsRequest {
  version?: string;
  id?: string;
  from?: string;
  chainId: string;
  atomicRequired?: boolean;
  calls: { to?: string; data?: string; value?: string; capabilities?: Record<string, unknown> }[];
  capabilities?: Record<string, { optional?: boolean }>;
}

export interface WalletCallsOptions {
  store: Store;
  chains: ChainRegistry;
  accounts: CustodyAccounts;
  /** One call through the transaction pipeline (policies, ledger, tracker), as eth_sendTransaction. */
  send: (
    chain: Chain,
    tx: TransactionObject,
    owner: string | null,
  ) => Promise<{ txHash: Hex; nonce: number }>;
}

const hexId = (n: number): Hex => `0x${n.toString(16)}`;

export class WalletCalls {
  constructor(private readonly options: WalletCallsOptions) {}

  /** Every chain chaingate serves, or those asked: non-atomic (calls go one by one). */
  async capabilities(owner: string | null, address: string, chainIds: readonly string[] | undefined) {
    if (!(await this.options.accounts.owns(owner, address))) throw unknownAccount();
    const served = this.options.chains.all().map((c) => hexId(c.chainId));
    const asked = chainIds?.map((id) => hexId(Number(BigInt(id)))) ?? served;
    return Object.fromEntries(
      asked.filter((id) => served.includes(id)).map((id) => [id, { atomic: { status: "unsupported" } }]),
    );
  }

  /**
   * Sends the calls in order, each through the pipeline (so under consecutive ledger nonces, each
   * judged by the policies). A call refused stops the bundle: the ones before it stay sent, and the
   * status says so (600 once they are mined, 400 when none was sent).
   */
  async send(owner: string | null, request: SendCallsRequest): Promise<{ id: string }> {
    if (request.version !== undefined && request.version !== VERSION && request.version !== "1.0")
      throw invalidParams(`version ${request.version} is not supported (${VERSION})`);
    if (request.atomicRequired === true)
      throw new ChaingateError("atomic execution is not supported: calls are sent one by one", {
        code: "ATOMICITY_NOT_SUPPORTED",
      });
    for (const [name, capability] of Object.entries(request.capabilities ?? {}))
      if (capability?.optional !== true)
        throw new ChaingateError(`capability ${name} is not supported`, { code: "UNSUPPORTED_CAPABILITY" });
    if (request.calls.length === 0) throw invalidParams("calls must not be empty");
    if (request.calls.length > MAX_CALLS)
      throw new ChaingateError(`at most ${MAX_CALLS} calls in a bundle`, { code: "BUNDLE_TOO_LARGE" });
    const chain = this.options.chains.get(Number(BigInt(request.chainId)));
    if (!chain)
      throw new ChaingateError(`chain ${request.chainId} is not served`, { code: "UNSUPPORTED_CHAIN_ID" });
    if (request.from === undefined) throw invalidParams("from is required (the custody address that sends)");
    const from = request.from;
    const id = request.id ?? `0x${randomBytes(32).toString("hex")}`;
    const key = { owner: owner ?? "", id };
    const db = this.options.store.db;
    // The id is claimed first, so a duplicate sends nothing.
    const inserted = await db
      .insertInto("call_bundles")
      .values({
        ...key,
        chain_id: chain.chainId,
        from_address: from.toLowerCase(),
        tx_hashes: "[]",
        tx_nonces: "[]",
        calls: request.calls.length,
        error: null,
        created_at: Date.now(),
      })
      .onConflict((oc) => oc.columns(["owner", "id"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
      throw new ChaingateError(`bundle ${id} was already sent`, { code: "DUPLICATE_BUNDLE_ID" });
    const hashes: Hex[] = [];
    const nonces: number[] = [];
    const record = (error: string | null) =>
      db
        .updateTable("call_bundles")
        .set({ tx_hashes: JSON.stringify(hashes), tx_nonces: JSON.stringify(nonces), error })
        .where("owner", "=", key.owner)
        .where("id", "=", id)
        .execute();
    for (const call of request.calls) {
      try {
        const sent = await this.options.send(
          chain,
          {
            from,
            ...(call.to === undefined ? {} : { to: call.to }),
            ...(call.data === undefined ? {} : { data: call.data }),
            ...(call.value === undefined ? {} : { value: call.value }),
          },
          owner,
        );
        hashes.push(sent.txHash);
        nonces.push(sent.nonce);
      } catch (error) {
        await record((error as Error).message);
        // Nothing sent: the caller hears why, as from eth_sendTransaction; later, the status says it.
        if (hashes.length === 0) throw error;
        return { id };
      }
    }
    await record(null);
    return { id };
  }

  /** The bundle's status from the tracker's records, with the node's receipts of the mined calls. */
  async status(owner: string | null, id: string) {
    const bundle = await this.options.store.db
      .selectFrom("call_bundles")
      .selectAll()
      .where("owner", "=", owner ?? "")
      .where("id", "=", id)
      .executeTakeFirst();
    if (!bundle) throw new ChaingateError(`no bundle ${id}`, { code: "UNKNOWN_BUNDLE_ID" });
    const hashes = JSON.parse(bundle.tx_hashes) as Hex[];
    const rows = await this.sentRows(bundle, hashes);
    const byHash = new Map(rows.map((r) => [r.tx_hash.toLowerCase(), r]));
    // A call the tracker replaced (fee bump) is followed to the transaction that took its nonce.
    const final = await Promise.all(
      hashes.map((h) => finalOf(this.options.store, byHash.get(h.toLowerCase()))),
    );
    const chain = this.options.chains.get(bundle.chain_id);
    const settled = final.every((r) => r !== undefined && (r.state === "confirmed" || r.state === "failed"));
    const receipts =
      settled && chain
        ? await Promise.all(final.map((r) => receiptOf(chain, r!.tx_hash, { batch: true })))
        : undefined;
    const succeeded = final.filter((r) => r?.state === "confirmed").length;
    const complete = bundle.error === null && hashes.length === bundle.calls;
    // EIP-5792's codes: nothing sent, still pending, all confirmed, all reverted, or partly.
    const status =
      hashes.length === 0
        ? 400
        : !settled
          ? 100
          : succeeded === bundle.calls && complete
            ? 200
            : succeeded === 0
              ? 500
              : 600;
    return {
      version: VERSION,
      id,
      chainId: hexId(bundle.chain_id),
      status,
      atomic: false,
      ...(receipts === undefined ? {} : { receipts: receipts.filter((r) => r !== null) }),
      ...(bundle.error === null ? {} : { error: bundle.error }),
    };
  }

  /**
   * The records of the bundle's hashes, read by sender and nonce (`transactions_sender_nonce`: no
   * index on the hash, decision 204); a bundle recorded before its nonces were kept, by sender alone.
   */
  private sentRows(bundle: CallBundlesTable, hashes: readonly Hex[]): Promise<TransactionsTable[]> {
    if (hashes.length === 0) return Promise.resolve([]);
    const nonces = bundle.tx_nonces === null ? undefined : (JSON.parse(bundle.tx_nonces) as number[]);
    return this.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("chain_id", "=", bundle.chain_id)
      .where("from_address", "=", getAddress(bundle.from_address))
      .$if(nonces !== undefined && nonces.length > 0, (q) => q.where("nonce", "in", nonces!))
      .where("tx_hash", "in", hashes)
      .execute();
  }
}
