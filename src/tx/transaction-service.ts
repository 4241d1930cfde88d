/** POST /transaction: unlock the wallet's key, then send through the pipeline, once per Idempotency-Key. */
import type { Hex, LocalAccount } from "viem";
import { badRequest } from "../errors/chaingate-error.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { requestHash } from "../idempotency/request-identity.js";
import { parseAddress, parseHexData, parseWei } from "../operations/parse-input.js";
import { awaitReceipt, type SyncSendLimits, syncTimeoutMs } from "../rpc/send-raw.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import type { NodeReceipt } from "../upstream/node-reads.js";
import type { WalletService } from "../wallets/wallet-service.js";
import type { AuthorizationItem } from "./authorizations.js";
import type { CustodyAuthorizations, SignerOf } from "./custody-authorizations.js";
import type { TransactionPipeline } from "./transaction-pipeline.js";

export interface TransactionBody {
  wallet_id?: string | undefined;
  password?: string | null | undefined;
  index?: number | null | undefined;
  transaction: {
    to?: string | null | undefined;
    data?: string | undefined;
    value?: string | undefined;
    authorizations?: AuthorizationBody[] | undefined;
  };
  chain_id?: number | string | undefined;
  /** Answer the receipt too, waiting up to this long (see SyncSendLimits). */
  wait_ms?: number | undefined;
}

/** An EIP-7702 authorization asked of one of the wallet's addresses. */
export interface AuthorizationBody {
  delegate: string;
  index?: number | undefined;
  chain_id?: number | undefined;
  nonce?: number | undefined;
}

export interface TransactionServiceOptions {
  wallets: WalletService;
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  idempotency: IdempotencyStore;
  syncSend: SyncSendLimits;
  authorizations: CustodyAuthorizations;
}

export class TransactionService {
  constructor(private readonly options: TransactionServiceOptions) {}

  async send(
    body: TransactionBody,
    context: { idempotencyKey?: string | undefined; chainHeader?: unknown; owner?: string | null },
  ): Promise<{ tx_hash: `0x${string}`; receipt?: NodeReceipt }> {
    const { wallets, chains, pipeline, idempotency } = this.options;
    const { to, data, value } = await this.checkBody(body);
    const chain = chains.select(
      body.chain_id === undefined ? undefined : String(body.chain_id),
      context.chainHeader,
    );
    const index = body.index ?? 0;
    const walletId = body.wallet_id!;
    // A KEYSTORE_V3 wallet refuses an empty one (PASSWORD_REQUIRED); a PKCS11 wallet takes none.
    const password = body.password ?? "";
    const owner = context.owner ?? null;

    const sent = await idempotency.once<{ tx_hash: `0x${string}` }>(
      {
        route: "POST /transaction",
        owner,
        key: context.idempotencyKey,
        // How long this caller waits is not what it asked to send: a retry with another wait replays.
        hash: () => requestHash(withoutWait(body), { chain: chain.chainId }),
        // Cut off after signing (a crash): the transaction is tracked; its hash is the answer.
        recover: (hashes) => ({ status: 200, body: { tx_hash: hashes[0] } }),
        authorize: async () => {
          await wallets.unlock(walletId, index, password, owner);
        },
      },
      async (idempotencyRef) => {
        const signer = await wallets.unlock(walletId, index, password, owner);
        const authorizations =
          body.transaction.authorizations === undefined
            ? undefined
            : await this.plan(
                chain,
                owner,
                walletId,
                index,
                password,
                signer.account,
                body.transaction.authorizations,
              );
        const submitted = await pipeline.submit({
          chain,
          account: signer.account,
          walletId,
          addressIndex: index,
          to,
          data,
          value,
          kind: "transfer",
          owner,
          idempotencyRef,
          ...(authorizations === undefined ? {} : { authorizations }),
        });
        return { tx_hash: submitted.txHash };
      },
    );
    if (body.wait_ms === undefined) return sent;
    const receipt = await awaitReceipt(
      chain,
      sent.tx_hash,
      syncTimeoutMs(body.wait_ms, this.options.syncSend),
    );
    return { tx_hash: sent.tx_hash, receipt };
  }

  /** The body's own checks before anything is unlocked: who signs, with what, and what is sent. */
  private async checkBody(body: TransactionBody): Promise<{ to: Hex | null; data: Hex; value: bigint }> {
    const { wallets } = this.options;
    if (body.wallet_id === undefined) throw badRequest("WALLET_ID_REQUIRED", "wallet_id is required");
    if (
      (typeof body.password !== "string" || body.password === "") &&
      !(await wallets.signsWithoutPassword(body.wallet_id))
    )
      throw badRequest("PASSWORD_REQUIRED", "password is required to sign with a KEYSTORE_V3 wallet");
    const to =
      body.transaction.to === undefined || body.transaction.to === null
        ? null
        : parseAddress(body.transaction.to, "transaction.to");
    const data = parseHexData(body.transaction.data, "transaction.data");
    const value = parseWei(body.transaction.value, "transaction.value");
    if (to === null && data === "0x") {
      throw badRequest(
        "INVALID_TRANSACTION",
        "a transaction without `to` deploys a contract and needs `data`",
      );
    }
    return { to, data, value };
  }

  /** The wallet's addresses named by index sign their authorizations, each unlocked with the request's password. */
  private async plan(
    chain: Chain,
    owner: string | null,
    walletId: string,
    senderIndex: number,
    password: string,
    sender: LocalAccount,
    entries: readonly AuthorizationBody[],
  ) {
    const unlocked = new Map<string, { account: LocalAccount; walletId: string }>([
      [sender.address.toLowerCase(), { account: sender, walletId }],
    ]);
    const items: AuthorizationItem[] = [];
    for (const entry of entries) {
      const index = entry.index ?? senderIndex;
      const account =
        index === senderIndex
          ? sender
          : (await this.options.wallets.unlock(walletId, index, password, owner)).account;
      unlocked.set(account.address.toLowerCase(), { account, walletId });
      items.push({
        kind: "request",
        delegate: parseAddress(entry.delegate, "transaction.authorizations.delegate"),
        authority: account.address,
        ...(entry.chain_id === undefined ? {} : { chainId: entry.chain_id }),
        ...(entry.nonce === undefined ? {} : { nonce: entry.nonce }),
      });
    }
    const signerOf: SignerOf = async (_owner, address) => {
      const found = unlocked.get(address.toLowerCase());
      if (!found) throw badRequest("INVALID_TRANSACTION", `${address} is not an address of this wallet`);
      return found;
    };
    return this.options.authorizations.plan(
      chain,
      owner,
      { address: sender.address, walletId },
      items,
      "transfer",
      signerOf,
    );
  }
}

function withoutWait(body: TransactionBody): Omit<TransactionBody, "wait_ms"> {
  const { wait_ms: _wait, ...rest } = body;
  return rest;
}
