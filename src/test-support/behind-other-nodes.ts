/** chaingate in front of Hardhat and Ganache, each behind a proxy its test makes, started and ended as one. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OtherNode, startHardhatAndGanache } from "./other-nodes.js";
import type { RpcProxy } from "./rpc-proxy.js";
import { startTestRuntime, type TestRuntime } from "./test-runtime.js";

export const HARDHAT = 31337;
export const GANACHE = 1337;

export interface BehindOtherNodes {
  nodes: Map<number, OtherNode>;
  proxies: Map<number, RpcProxy>;
  rt: TestRuntime;
  /** Stops chaingate, the proxies and the nodes (each by its own pid), and removes the folder. */
  close(): Promise<void>;
}

/**
 * Starts both nodes, a proxy for each (`proxyFor`), and chaingate with the two chains (Hardhat's
 * its home chain) reached through the proxies, under `env`.
 */
export async function startBehindHardhatAndGanache(
  name: string,
  proxyFor: (chainId: number, node: OtherNode) => Promise<RpcProxy>,
  env: Record<string, string>,
): Promise<BehindOtherNodes> {
  const dir = mkdtempSync(join(tmpdir(), `chaingate-${name}-`));
  const nodes = await startHardhatAndGanache(dir);
  const proxies = new Map<number, RpcProxy>();
  const chains = [];
  for (const [chainId, node] of nodes) {
    const proxy = await proxyFor(chainId, node);
    proxies.set(chainId, proxy);
    chains.push({ chainId, upstreams: [{ url: proxy.url }] });
  }
  const config = join(dir, "chaingate.json");
  writeFileSync(config, JSON.stringify({ homeChainId: HARDHAT, chains }));
  const rt = await startTestRuntime({ env: { CHAINGATE_CONFIG: config, ...env } });
  return {
    nodes,
    proxies,
    rt,
    close: async () => {
      await rt.close();
      await Promise.all([...proxies.values()].map((p) => p.close()));
      await Promise.all([...nodes.values()].map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
