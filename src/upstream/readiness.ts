/** Readiness computed in the background from the pools' state and one eth_syncing per chain, never per request. */
import type { Logger } from "pino";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { ChainRegistry } from "./chain-registry.js";
import { nodeRead } from "./node-reads.js";

export interface ChainReadiness {
  chain_id: number;
  home: boolean;
  /** At least one verified upstream answers. */
  reachable: boolean;
  synced: boolean;
  head: number | null;
  healthy_upstreams: number;
  upstreams: number;
}

export interface Readiness {
  synced: boolean;
  ready: boolean;
  chains: ChainReadiness[];
  /** Why this instance is not ready besides its chains (a server key that does not match the store). */
  problems?: string[];
}

export class ReadinessMonitor {
  private syncing = new Map<number, boolean>();
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly chains: ChainRegistry,
    intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.loop = new BackgroundLoop({
      name: "readiness check",
      everyMs: intervalMs,
      pass: () => this.check(),
      logger,
      unref: true,
    });
  }

  /** One round of eth_syncing, one call per chain with a healthy upstream. */
  async check(): Promise<void> {
    await Promise.all(
      this.chains.all().map(async (chain) => {
        if (!chain.pool.healthy) {
          this.syncing.delete(chain.chainId);
          return;
        }
        try {
          const answer = await nodeRead(chain, "eth_syncing", []);
          // eth_syncing answers false when synced, or a progress object while syncing.
          this.syncing.set(chain.chainId, answer !== false);
        } catch (error) {
          this.syncing.delete(chain.chainId);
          this.logger.debug({ err: error, chainId: chain.chainId }, "readiness check failed");
        }
      }),
    );
  }

  private readonly conditions = new Map<string, () => string | undefined>();

  /**
   * A condition of this instance besides its chains (its server key matches the store's sealed
   * keys, say): while `problem` answers a reason, the instance is not ready and /readyz says why.
   */
  require(name: string, problem: () => string | undefined): void {
    this.conditions.set(name, problem);
  }

  snapshot(): Readiness {
    const chains = this.chains.all().map((chain) => {
      const stats = chain.pool.stats();
      const healthy = stats.filter((s) => s.status === "verified" && !s.cooling).length;
      const reachable = healthy > 0;
      return {
        chain_id: chain.chainId,
        home: chain.chainId === this.chains.homeChainId,
        reachable,
        synced: reachable && this.syncing.get(chain.chainId) === false,
        head: chain.head?.head ?? chain.pool.bestHead ?? null,
        healthy_upstreams: healthy,
        upstreams: stats.length,
      };
    });
    const synced = chains.find((c) => c.home)?.synced ?? false;
    const problems = [...this.conditions.values()].flatMap((problem) => problem() ?? []);
    return {
      synced,
      ready: synced && chains.every((c) => c.reachable) && problems.length === 0,
      chains,
      ...(problems.length > 0 ? { problems } : {}),
    };
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
