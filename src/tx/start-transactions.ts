/** Start-up of the transaction pipeline: fees, nonces, signers (pruned), idempotency, and the tracker (started). */
import type { LocalAccount } from "viem";
import type { Config } from "../config/config.js";
import { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { PRUNE_MS, startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import { PolicyGuard } from "../policies/policy-guard.js";
import { PolicyStore } from "../policies/policy-store.js";
import { simulateTransaction } from "../policies/simulate-transaction.js";
import type { Store } from "../store/database.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { chainTrust } from "../upstream/chain-trust.js";
import type { WalletService } from "../wallets/wallet-service.js";
import { CustodyAuthorizations } from "./custody-authorizations.js";
import { FeeOracle } from "./fee-oracle.js";
import { TransactionFiller } from "./fill-transaction.js";
import { NonceLedger } from "./nonce-ledger.js";
import { SignerRegistry } from "./signer-registry.js";
import { TransactionPipeline } from "./transaction-pipeline.js";
import { TransactionService } from "./transaction-service.js";
import { TransactionTracker } from "./transaction-tracker.js";
import { asFault, isSignedButNotSent } from "./tx-errors.js";

export interface Transactions {
  fees: FeeOracle;
  pipeline: TransactionPipeline;
  idempotency: IdempotencyStore;
  transactions: TransactionService;
  tracker: TransactionTracker;
  policies: PolicyStore;
  guard: PolicyGuard;
  filler: TransactionFiller;
  authorizations: CustodyAuthorizations;
}

export function startTransactions(
  config: Config,
  deps: {
    store: Store;
    chains: ChainRegistry;
    wallets: WalletService;
    /** Signers kept beyond the registry's memory, for the tracker's fee bumps (unattended wallets). */
    fallbackSigner: (address: string) => Promise<LocalAccount | undefined>;
  } & Lifecycle,
): Transactions {
  const { store, chains, logger, shutdown } = deps;
  const fees = new FeeOracle();
  const signers = new SignerRegistry(config.unlockCacheMs);
  startPeriodic({ name: "signer prune", everyMs: PRUNE_MS, run: () => signers.prune() }, deps);
  const ledger = new NonceLedger(store);
  const policies = new PolicyStore(store);
  const guard = new PolicyGuard({
    store,
    policies,
    simulate: async (request) => {
      const chain = chains.get(request.chainId);
      if (!chain) throw new Error(`chain ${request.chainId} is not configured`);
      try {
        return await simulateTransaction(chain, {
          from: request.address,
          to: request.to,
          data: request.data,
          value: request.value,
          gas: request.gas,
        });
      } catch (error) {
        throw asFault(error, "simulating the transaction for the policy");
      }
    },
  });
  const pipeline = new TransactionPipeline({
    guard,
    store,
    ledger,
    fees,
    gasMarginPercent: config.gasMarginPercent,
    logger,
    signers,
  });
  const idempotency = new IdempotencyStore(store, isSignedButNotSent);
  const authorizations = new CustodyAuthorizations({
    guard,
    nextNonce: (chain, address) => pipeline.nextNonce(chain, address),
  });
  const transactions = new TransactionService({
    wallets: deps.wallets,
    chains,
    pipeline,
    idempotency,
    syncSend: config.syncSend,
    authorizations,
  });
  const tracker = new TransactionTracker({
    store,
    chains,
    logger,
    confirmations: config.confirmations,
    finality: (chainId) => chainTrust(config, chainId).finality,
    intervalMs: config.trackerIntervalMs,
    resendAfterMs: config.resendAfterMs,
    replaceAfterMs: config.replaceAfterMs,
    maxFeePerGas: config.maxFeePerGas,
    pipeline,
    ledger,
    fees,
    signers,
    fallbackSigner: deps.fallbackSigner,
  });
  // Started before the app answers: stored but unsent transactions (a crash) go out at once.
  tracker.start();
  shutdown.add("tracker", () => tracker.stop());
  const filler = new TransactionFiller({ ledger, fees, guard, gasMarginPercent: config.gasMarginPercent });
  return { fees, pipeline, idempotency, transactions, tracker, policies, guard, filler, authorizations };
}
