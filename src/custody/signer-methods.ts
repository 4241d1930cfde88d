/** The standard signer methods (eth_accounts, eth_sign, eth_sendTransaction, ...) served from custody wallets. */
import type { Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { invalidParams } from "../errors/rpc-errors.js";
import type { FilterService } from "../filters/filter-service.js";
import { permitGrants } from "../policies/permit-grants.js";
import type { PolicyGuard } from "../policies/policy-guard.js";
import { awaitReceipt, type SyncSendLimits, syncTimeoutMs } from "../rpc/send-raw.js";
import type { Store } from "../store/database.js";
import { toRpcAuthorization } from "../tx/authorizations.js";
import type { CustodyAuthorizations, SignerOf } from "../tx/custody-authorizations.js";
import type { FeeOracle } from "../tx/fee-oracle.js";
import type { TransactionFiller } from "../tx/fill-transaction.js";
import { type IdempotencyStore, requestHash } from "../tx/idempotency.js";
import type { SignedOperation, TransactionPipeline } from "../tx/transaction-pipeline.js";
import { nodeUnavailable } from "../tx/tx-errors.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { checkedResult, nodeRead } from "../upstream/node-reads.js";
import type { CustodyAccounts } from "./custody-accounts.js";
import {
  type FeeChoice,
  readAuthorizationList,
  readTransaction,
  settleFees,
  type TransactionObject,
} from "./transaction-request.js";
import { readTypedData } from "./typed-data.js";
import { type SendCallsRequest, WalletCalls } from "./wallet-calls.js";

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

const MESSAGE_HEX = /^0x([0-9a-fA-F]{2})*$/;

/** personal_sign's data is hex bytes; plain text (as some clients send) is signed as its UTF-8 bytes. */
const messageOf = (data: string): { raw: Hex } | string =>
  MESSAGE_HEX.test(data) ? { raw: data as Hex } : data;

const isOracleChoice = (choice: FeeChoice): boolean => choice.kind === "auto" && !choice.legacy;

export class SignerMethods {
  private readonly signerOf: SignerOf;
  private readonly calls: WalletCalls;

  constructor(private readonly options: SignerMethodsOptions) {
    this.signerOf = (owner, address) => options.accounts.signer(owner, address);
    this.calls = new WalletCalls({
      store: options.store,
      chains: options.chains,
      accounts: options.accounts,
      send: async (chain, tx, owner) => {
        const submitted = await options.pipeline.submit(await this.operation(chain, tx, owner));
        await options.filters.noteSent(chain, submitted.txHash);
        return submitted.txHash;
      },
    });
  }

  async handle(
    chain: Chain,
    method: string,
    params: readonly unknown[],
    context: SignerContext,
  ): Promise<unknown> {
    const { accounts } = this.options;
    const { owner } = context;
    switch (method) {
      case "eth_accounts": {
        const own = await accounts.addresses(owner);
        if (!this.options.nodeAccounts) return own;
        const node = await nodeRead(chain, "eth_accounts", []);
        return [...own, ...node];
      }
      case "eth_sign":
        return this.forNodeOr(chain, method, params, owner, params[0] as string, async () => {
          const { account } = await this.messageSigner(chain, method, owner, params[0] as string, {
            kind: "message",
          });
          return account.signMessage({ message: { raw: params[1] as Hex } });
        });
      case "personal_sign":
        return this.forNodeOr(chain, method, params, owner, params[1] as string, async () => {
          // geth's optional third parameter: the password, for this signature only (web3.js sends it).
          const password = params[2] as string | undefined;
          const { account } = await this.messageSigner(
            chain,
            method,
            owner,
            params[1] as string,
            { kind: "message" },
            password,
          );
          return account.signMessage({ message: messageOf(params[0] as string) });
        });
      case "eth_signTypedData_v4": {
        // The document is checked before the account, so a malformed one is -32602 whoever asks.
        const typed = readTypedData(params[1]);
        return this.forNodeOr(chain, method, params, owner, params[0] as string, async () => {
          const { account } = await this.messageSigner(chain, method, owner, params[0] as string, {
            kind: "typed_data",
            domain: (typed.domain ?? {}) as Record<string, unknown>,
            grants: permitGrants(typed),
          });
          return account.signTypedData(typed);
        });
      }
      case "eth_signTransaction": {
        const tx = params[0] as TransactionObject;
        return this.forNodeOr(chain, method, params, owner, tx.from, async () => {
          const op = await this.operation(chain, tx, owner);
          return (await this.options.pipeline.signOnly(op)).raw;
        });
      }
      case "eth_sendTransaction": {
        const tx = params[0] as TransactionObject;
        return this.forNodeOr(chain, method, params, owner, tx.from, () => this.send(chain, tx, context));
      }
      case "eth_sendTransactionSync": {
        const tx = params[0] as TransactionObject;
        const timeoutMs = syncTimeoutMs(params[1], this.options.syncSend);
        // The node's own accounts (devnet switch) send with the node's eth_sendTransaction, then wait alike.
        const hash = checkedResult(
          "eth_sendTransaction",
          await this.forNodeOr(chain, "eth_sendTransaction", [tx], owner, tx.from, () =>
            // One Idempotency-Key space with eth_sendTransaction: a retry of either replays the one send.
            this.send(chain, tx, context),
          ),
        );
        return awaitReceipt(chain, hash, timeoutMs);
      }
      case "wallet_getCapabilities":
        return this.calls.capabilities(owner, params[0] as string, params[1] as string[] | undefined);
      case "wallet_sendCalls":
        return this.calls.send(owner, params[0] as SendCallsRequest);
      case "wallet_getCallsStatus":
        return this.calls.status(owner, params[0] as string);
      case "eth_signAuthorization": {
        const [item] = readAuthorizationList([params[1]]);
        if (item!.kind !== "request")
          throw invalidParams("authorization: give the delegate, chainId and nonce to sign, not a signature");
        const signed = await this.options.authorizations.sign(
          chain,
          owner,
          {
            authority: params[0] as `0x${string}`,
            delegate: item!.delegate,
            ...(item!.chainId === undefined ? {} : { chainId: item!.chainId }),
            ...(item!.nonce === undefined ? {} : { nonce: item!.nonce }),
          },
          method,
          this.signerOf,
        );
        return toRpcAuthorization(signed);
      }
      case "eth_fillTransaction": {
        const tx = params[0] as Partial<TransactionObject>;
        const holder = tx.from === undefined ? undefined : await accounts.holder(owner, tx.from);
        // Not the tenant's custody address: the node fills it as it would for anyone.
        if (holder === undefined) return chain.pool.call({ method, params: [...params] });
        return this.fill(chain, { ...tx, from: tx.from! }, owner, holder.walletId);
      }
      case "personal_unlockAccount": {
        const [address, password, duration] = params as [string, string, string | number | undefined];
        const seconds = duration === undefined || duration === null ? undefined : Number(BigInt(duration));
        await accounts.unlock(owner, address, password, seconds);
        return true;
      }
      case "personal_lockAccount":
        await accounts.lock(owner, params[0] as string);
        return true;
      default:
        throw invalidParams(`${method} is not a signer method`);
    }
  }

  /** The account for a message signature, once the policies allow it (the decision is audited). */
  private async messageSigner(
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
  private async forNodeOr(
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

  private async operation(
    chain: Chain,
    tx: TransactionObject,
    owner: string | null,
  ): Promise<SignedOperation> {
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
  private async fill(chain: Chain, tx: TransactionObject, owner: string | null, walletId: string) {
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
  private async send(chain: Chain, tx: TransactionObject, context: SignerContext): Promise<unknown> {
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
        const submitted = await this.options.pipeline.submit({ ...op, idempotencyRef });
        // Sent through us: pending filters see it even if no node filter reports it.
        await this.options.filters.noteSent(chain, submitted.txHash);
        return submitted.txHash;
      },
    );
  }
}
