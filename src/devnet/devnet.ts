/** The embedded default: a home chain and a peer chain on anvil, state kept in the data dir. */
import { join } from "node:path";
import type { Logger } from "pino";
import { type AnvilNode, startAnvil } from "./anvil-node.js";
import { startAutomineWatchdog } from "./automine-watchdog.js";

export interface Devnet {
  readonly nodes: readonly AnvilNode[];
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
  return { nodes: started, stop };
}
