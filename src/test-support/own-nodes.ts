/** For tests that start their own anvil nodes and a runtime on them: one temp folder, all of it stopped after the file. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll } from "vitest";
import { type AnvilNode, type AnvilOptions, startAnvil } from "../devnet/anvil-node.js";
import { startTestRuntime, type TestRuntime } from "./test-runtime.js";

export function ownNodes(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `chaingate-${name}-`));
  const logger = pino({ level: "silent" });
  const nodes: AnvilNode[] = [];
  /** Every runtime the file started: a second one must not take the first's place (it was never stopped). */
  const runtimes: TestRuntime[] = [];
  let closed: Promise<void> | undefined;
  /** Once (a test of it, then the file's end): a runtime a test closed itself is not stopped again either. */
  const closeAll = (): Promise<void> => {
    closed ??= (async () => {
      for (const runtime of runtimes) await runtime.close();
      await Promise.all(nodes.map((node) => node.stop()));
      rmSync(dir, { recursive: true, force: true });
    })();
    return closed;
  };
  afterAll(closeAll);
  return {
    /** The file's temp folder (removed after the file), for config files and the like. */
    dir,
    /** An automining anvil (chain 1001 unless told) with its state in its own subfolder. */
    async anvil(folder: string, options: Partial<Omit<AnvilOptions, "dir">> = {}): Promise<AnvilNode> {
      const node = await startAnvil({
        chainId: 1001,
        blockTime: 0,
        logger,
        ...options,
        dir: join(dir, folder),
      });
      nodes.push(node);
      return node;
    },
    /** Writes `config` as the folder's chaingate.json; its path, for CHAINGATE_CONFIG. */
    configFile(config: object): string {
      const file = join(dir, "chaingate.json");
      writeFileSync(file, JSON.stringify(config));
      return file;
    },
    async runtime(options: Parameters<typeof startTestRuntime>[0]): Promise<TestRuntime> {
      const runtime = await startTestRuntime(options);
      runtimes.push(runtime);
      return runtime;
    },
    /** What runs after the file: every runtime closed, every node stopped, the folder removed (for a test of it). */
    closeAll,
  };
}
