/** What the gateway benches stand up: an anvil with a few blocks (a real block to fetch by hash), and chaingate as its own process. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { anvilBinaryPath } from "../src/devnet/anvil-binary.js";
import { type AnvilNode, startAnvil } from "../src/devnet/anvil-node.js";

/** anvil's first dev account (funded, unlocked). */
export const DEV = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

export async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

/** Starts anvil in `dir`/anvil and mines three blocks; answers it with block 1's hash. */
export async function startBenchAnvil(dir: string): Promise<{ anvil: AnvilNode; blockHash: string }> {
  const anvil = await startAnvil({
    chainId: 1001,
    dir: join(dir, "anvil"),
    blockTime: 0,
    logger: pino({ level: "silent" }),
  });
  for (let i = 0; i < 3; i++)
    await rpc(anvil.url, "eth_sendTransaction", [{ from: DEV, to: DEV, value: "0x1" }]);
  const block = (await rpc(anvil.url, "eth_getBlockByNumber", ["0x1", false])) as { hash: string };
  return { anvil, blockHash: block.hash };
}

/**
 * A bare anvil, as a node in production is: no state file, so no state dump every second (the
 * embedded devnet's, whose cost grows with the chain and would be charged to the slower runs).
 * `flags` are added to its command line (e.g. a block time). `started` collects it for the
 * caller's clean-up.
 */
export function startPlainAnvil(
  started: ChildProcess[] = [],
  flags: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    anvilBinaryPath(),
    ["--host", "127.0.0.1", "--port", "0", "--chain-id", "1001", ...flags],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  started.push(child);
  return urlFromOutput(child, "anvil", /Listening on (\S+:\d+)/, (address) => `http://${address}`);
}

/**
 * Reads a started process's output until `pattern` matches, and answers the URL made from its first
 * group. The output is still read to the end (a full pipe would stall the process), but not kept.
 */
function urlFromOutput(
  child: ChildProcess,
  what: string,
  pattern: RegExp,
  toUrl: (match: string) => string,
): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    let out = "";
    let found = false;
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      if (found || out.length > 65_536) return;
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        found = true;
        clearTimeout(timer);
        resolve({ child, url: toUrl(match[1]!) });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", () => reject(new Error(`${what} exited: ${out}`)));
  });
}

/** The node flags of package.json's `start` script (between `node` and the script): every bench runs chaingate with them. */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    scripts: { start: string };
  };
  return /^(?:exec\s+)?node\s+(.*?)\s*dist\/main\.js$/.exec(pkg.scripts.start)?.[1]?.split(/\s+/) ?? [];
}

/**
 * chaingate built (dist/main.js) as its own process in front of `upstream`, request logging off, so
 * its CPU and memory are its own; answers once it logs "chaingate ready". `started` collects it for
 * the caller's clean-up.
 */
export function startGatewayProcess(
  upstream: string,
  dataDir: string,
  started: ChildProcess[] = [],
  /** Environment over the bench's own (`{ CHAINGATE_LOG_REQUESTS: "true" }`: the default configuration). */
  env: Record<string, string> = {},
  /** The build to run: this checkout's by default, another's `dist/main.js` to compare two builds. */
  main = new URL("../dist/main.js", import.meta.url).pathname,
  /** Node flags after all others, for this process only. */
  extraArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  // Node's flags as `npm start` gives them (the memory bounds), then BENCH_GATEWAY_NODE_ARGS: extra
  // flags for chaingate only (e.g. "--cpu-prof" to profile it), then `extraArgs` (the last of a
  // repeated V8 flag wins: one build run with other flags than `npm start`'s).
  const nodeArgs = [
    ...startFlags(),
    ...(process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" "),
    ...extraArgs,
  ].filter((a) => a !== "");
  // The bench's anvil is chain 1001, which chaingate does not know as a development chain: its
  // finality would be 64 blocks. A config file says one block, as for the embedded chains.
  mkdirSync(dataDir, { recursive: true });
  const config = join(dataDir, "bench-chain.json");
  writeFileSync(
    config,
    JSON.stringify({ chains: [{ chainId: 1001, upstreams: [{ url: upstream }], finality: 1 }] }),
  );
  const child = spawn(process.execPath, [...nodeArgs, main], {
    env: {
      ...process.env,
      PORT: "0",
      LOG_LEVEL: "info",
      CHAINGATE_LOG_REQUESTS: "false",
      CHAINGATE_DATA_DIR: dataDir,
      CHAINGATE_CONFIG: config,
      ...env,
    },
    // Read to the end by urlFromOutput, as a log collector would: the access log's cost is in the run.
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  // The port is chosen by the OS: read it from the ready line.
  return urlFromOutput(child, "gateway", /"url":"(http:\/\/[^"]+)".*"msg":"chaingate ready"/, (url) => url);
}
