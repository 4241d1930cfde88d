/** Start-up of the relayer, where chaingate's contracts are deployed (stopped with everything else). */
import type { Config } from "../config/config.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { chainTrust } from "../upstream/chain-trust.js";
import type { LaneLimits } from "./lane-limits.js";
import { Relayer } from "./relayer.js";

export function startRelayer(
  config: Config,
  deps: {
    store: Store;
    chains: ChainRegistry;
    pipeline: TransactionPipeline;
    system: SystemContracts | undefined;
    lanes: LaneLimits;
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
    trust: (chainId) => chainTrust(config, chainId),
    lanes: deps.lanes,
  });
  for (const chain of deps.chains.all()) {
    const trust = chainTrust(config, chain.chainId);
    const { configured } = chain.pool.quorumView();
    deps.logger.info(
      {
        chain: chain.chainId,
        finality: trust.finality,
        finality_from: trust.source,
        quorum: trust.quorum ?? `every usable upstream, at least ${Math.min(2, configured)}`,
        upstreams: configured,
      },
      configured === 1
        ? "relayer: transports from this chain are trusted to its one upstream (configure 2 or more for a quorum)"
        : "relayer: transports from this chain need its upstreams' quorum",
    );
  }
  if (deps.run) relayer.start();
  deps.shutdown.add("relayer", () => relayer.stop());
  return relayer;
}
