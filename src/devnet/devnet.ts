/** The embedded default: a home chain and a peer chain on anvil, state kept in the data dir. */
import { join } from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config/config.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import { type AnvilNode, startAnvil } from "./anvil-node.js";
import { startAutomineWatchdog } from "./automine-watchdog.js";

export interface Devnet {
  readonly nodes: readonly AnvilNode[];
  /** How the embedded node of a chain is doing (for /network), or undefined for another chain. */
  nodeStatus(chainId: number): { status: AnvilNode["status"]; restarts: number } | undefined;
  stop(): Promise<void>;
}

export interface DevnetOptions {
  dataDir: string;
  chainIds: readonly number[];
  blockTime: number;
  logger: Logger;
}

export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  const started: AnvilNode[] = [];
  const watchdogs: (() => void)[] = [];
  const stop = async () => {
    for (const off of watchdogs.splice(0)) off();
    await Promise.all(started.map((node) => node.stop()));
  };
  try {
    const nodes = await Promise.allSettled(
      options.chainIds.map((chainId) =>
        startAnvil({
          chainId,
          dir: join(options.dataDir, "devnet", String(chainId)),
          blockTime: options.blockTime,
          logger: options.logger,
        }),
      ),
    );
    for (const result of nodes) if (result.status === "fulfilled") started.push(result.value);
    const failed = nodes.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // Automining chains only: with a block time, the next block takes whatever is ready anyway.
    if (options.blockTime === 0) {
      for (const node of started)
        watchdogs.push(startAutomineWatchdog({ url: node.url, logger: options.logger }));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const nodeStatus = (chainId: number) => {
    const node = started.find((n) => n.chainId === chainId);
    return node && { status: node.status, restarts: node.restarts };
  };
  return { nodes: started, nodeStatus, stop };
}

/** The embedded chains the configuration asks for, stopped with everything else. */
export async function startEmbeddedChains(config: Config, deps: Lifecycle): Promise<Devnet> {
  const devnet = await startDevnet({
    dataDir: config.dataDir,
    chainIds: config.devnet.chainIds,
    blockTime: config.devnet.blockTime,
    logger: deps.logger,
  });
  deps.shutdown.add("embedded chains", () => devnet.stop());
  return devnet;
}
