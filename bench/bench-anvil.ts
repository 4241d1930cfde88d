/** The anvil the gateway benches stand in front of, with a few blocks so there is a real block to fetch by hash. */
import { join } from "node:path";
import { pino } from "pino";
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
