/** What the signer method handlers share: the custody accounts, the one pipeline, and the steps several methods take (a message signer judged by policy, a node's own account, an operation from a transaction object, a send once per Idempotency-Key). */
import type { Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { invalidParams } from "../errors/rpc-errors.js";
import type { FilterService } from "../filters/filter-service.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { requestHash } from "../idempotency/request-identity.js";
import type { PolicyGuard } from "../policies/policy-guard.js";
import type { SyncSendLimits } from "../rpc/send-raw.js";
import type { Store } from "../store/database.js";
import type { CustodyAuthorizations, SignerOf } from "../tx/custody-authorizations.js";
import type { FeeOracle } from "../tx/fee-oracle.js";
import type { TransactionFiller } from "../tx/fill-transaction.js";
import type { SignedOperation, TransactionPipeline } from "../tx/transaction-pipeline.js";
import { nodeUnavailable } from "../tx/tx-errors.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import type { CustodyAccounts } from "./custody-accounts.js";
import {
  type FeeChoice,
  readTransaction,
  settleFees,
  type TransactionObject,
} from "./transaction-request.js";
import { WalletCalls } from "./wallet-calls.js";

export interface SignerContext {
  /** The wallet owner: the API key's id, or null without keys. */
  owner: string | null;
  /** Idempotency-Key of the request (per call id inside a batch). */
  idempotencyKey?: string | undefined;
}

export interface SignerMethodsOptions {
  accounts: CustodyAccounts;
  pipeline: TransactionPipeline;
  fees: FeeOracle;
  idempotency: IdempotencyStore;
  filters: FilterService;
  /** Devnet aid: anvil's own accounts are listed too, and calls for them go to the node. */
  nodeAccounts: boolean;
  /** Message signatures ask the policies too (transactions do so in the pipeline). */
  guard: PolicyGuard;
  /** eth_sendTransactionSync's default and longest wait. */
  syncSend: SyncSendLimits;
  /** eth_fillTransaction for custody addresses. */
  filler: TransactionFiller;
  /** EIP-7702 authorizations signed by custody addresses (eth_signAuthorization, type-4 sends). */
  authorizations: CustodyAuthorizations;
  /** EIP-5792 bundles are kept in the store and may name any served chain. */
  store: Store;
  chains: ChainRegistry;
}

const isOracleChoice = (choice: FeeChoice): boolean => choice.kind === "auto" && !choice.legacy;

export class SignerKit {
  readonly signerOf: SignerOf;
  readonly calls: WalletCalls;

  constructor(readonly options: SignerMethodsOptions) {
    this.signerOf = (owner, address) => options.accounts.signer(owner, address);
    this.calls = new WalletCalls({
      store: options.store,
      chains: options.chains,
      accounts: options.accounts,
      send: async (chain, tx, owner) => {
        const submitted = await options.pipeline.submit(await this.operation(chain, tx, owner));
        await options.filters.noteSent(chain, submitted.txHash);
        return { txHash: submitted.txHash, nonce: submitted.nonce };
      },
    });
  }

  /** The account for a message signature, once the policies allow it (the decision is audited). */
  async messageSigner(
    chain: Chain,
    method: string,
    owner: string | null,
    address: string,
    facts: Parameters<PolicyGuard["message"]>[1],
    password?: string,
  ) {
    const signer =
      password === undefined
        ? await this.options.accounts.signer(owner, address)
        : await this.options.accounts.signerWithPassword(owner, address, password);
    await this.options.guard.message(
      {
        apiKeyId: owner,
        walletId: signer.walletId,
        address: signer.account.address,
        operation: method,
        chainId: chain.chainId,
      },
      facts,
    );
    return signer;
  }

  /** With the devnet switch on, an address that is not the tenant's custody address is the node's business. */
  async forNodeOr(
    chain: Chain,
    method: string,
    params: readonly unknown[],
    owner: string | null,
    address: string,
    custody: () => Promise<unknown>,
  ): Promise<unknown> {
    if (this.options.nodeAccounts && !(await this.options.accounts.owns(owner, address))) {
      return chain.pool.call({ method, params: [...params] });
    }
    return custody();
  }

  /** The signed operation a transaction object asks for, from the caller's custody address. */
  async operation(chain: Chain, tx: TransactionObject, owner: string | null): Promise<SignedOperation> {
    const request = readTransaction(tx, chain.chainId);
    const signer = await this.options.accounts.signer(owner, request.from);
    // Left to the pipeline (the oracle's) unless the caller fixed something, a legacy type included.
    const fees = isOracleChoice(request.fees) ? undefined : await this.settledFees(chain, request.fees);
    const authorizations =
      request.authorizations === undefined
        ? undefined
        : await this.options.authorizations.plan(
            chain,
            owner,
            { address: signer.account.address, walletId: signer.walletId },
            request.authorizations,
            "eth_sendTransaction",
            this.signerOf,
          );
    return {
      chain,
      account: signer.account,
      walletId: signer.walletId,
      addressIndex: signer.index,
      to: request.to,
      data: request.data,
      value: request.value,
      kind: "transfer",
      metadata: { via: "eth_sendTransaction" },
      owner,
      ...(fees === undefined ? {} : { fees }),
      ...(request.gas === undefined ? {} : { gas: request.gas }),
      ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
      ...(request.accessList === undefined ? {} : { accessList: request.accessList }),
      ...(authorizations === undefined ? {} : { authorizations }),
    };
  }

  /** The transaction as chaingate would sign it now; nothing is signed, reserved or audited. */
  async fill(chain: Chain, tx: TransactionObject, owner: string | null, walletId: string) {
    const request = readTransaction(tx, chain.chainId);
    // Filling signs nothing: an authorization must come signed (eth_signAuthorization answers one).
    const authorizationList = request.authorizations?.map((item) => {
      if (item.kind === "signed") return item.authorization;
      throw invalidParams(
        "eth_fillTransaction signs nothing: pass each authorization signed (eth_signAuthorization answers one), or send the type-4 transaction itself",
      );
    });
    // Left to the pipeline (the oracle's) unless the caller fixed something, a legacy type included.
    const fees = isOracleChoice(request.fees) ? undefined : await this.settledFees(chain, request.fees);
    return this.options.filler.fill({
      chain,
      from: request.from,
      to: request.to,
      data: request.data,
      value: request.value,
      walletId,
      owner,
      ...(fees === undefined ? {} : { fees }),
      ...(request.gas === undefined ? {} : { gas: request.gas }),
      ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
      ...(request.accessList === undefined ? {} : { accessList: request.accessList }),
      ...(authorizationList === undefined ? {} : { authorizationList }),
    });
  }

  /** The caller's fee choice completed with the oracle's current fees. */
  private async settledFees(chain: Chain, choice: FeeChoice) {
    if (choice.kind === "legacy") return { type: "legacy" as const, gasPrice: choice.gasPrice };
    try {
      return settleFees(choice, await this.options.fees.get(chain));
    } catch (error) {
      throw error instanceof ChaingateError
        ? error
        : nodeUnavailable(`reading fees: ${(error as Error).message}`);
    }
  }

  /** Through the one pipeline, once per Idempotency-Key, exactly as POST /transaction. */
  async send(chain: Chain, tx: TransactionObject, context: SignerContext): Promise<unknown> {
    const { owner } = context;
    return this.options.idempotency.once<Hex>(
      {
        route: "eth_sendTransaction",
        owner,
        key: context.idempotencyKey,
        hash: () => requestHash(tx, { chain: chain.chainId }),
        recover: (hashes) => ({ status: 200, body: hashes[0] }),
        // A replay is for a caller who could sign now: the address unlocked (or unattended) for its key.
        authorize: async () => {
          await this.options.accounts.signer(owner, readTransaction(tx, chain.chainId).from);
        },
      },
      async (idempotencyRef) => {
        const op = await this.operation(chain, tx, owner);
        // Set on the operation made for this call, not spread into a copy of it (decision 217).
        op.idempotencyRef = idempotencyRef;
        const submitted = await this.options.pipeline.submit(op);
        // Sent through us: pending filters see it even if no node filter reports it.
        await this.options.filters.noteSent(chain, submitted.txHash);
        return submitted.txHash;
      },
    );
  }
}
