/** Start-up of the relayer, where chaingate's contracts are deployed (stopped with everything else). */
import type { Config } from "../config/config.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { Relayer } from "./relayer.js";

export function startRelayer(
  config: Config,
  deps: {
    store: Store;
    chains: ChainRegistry;
    pipeline: TransactionPipeline;
    system: SystemContracts | undefined;
    /** False leaves it stopped (tests that drive it by hand). */
    run: boolean;
  } & Lifecycle,
): Relayer | undefined {
  const { system } = deps;
  if (system === undefined) return undefined;
  const relayer = new Relayer({
    store: deps.store,
    chains: deps.chains,
    pipeline: deps.pipeline,
    system,
    logger: deps.logger,
    intervalMs: config.relayerIntervalMs,
    confirmations: config.confirmations,
  });
  if (deps.run) relayer.start();
  deps.shutdown.add("relayer", () => relayer.stop());
  return relayer;
}
