/** Mines a block when an automining anvil leaves ready transactions in its pool (an anvil race under load). */
import type { Logger } from "pino";

export interface AutomineWatchdogOptions {
  url: string;
  logger: Logger;
  intervalMs?: number;
}

async function call(url: string, method: string): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
}

/**
 * With automine, a transaction that is ready (its nonce is next) is mined at once. Under a burst of
 * concurrent sends anvil can leave one in the pool: ready, never mined, and every later nonce of
 * its sender waits behind it. A real chain's next block would take it; on the embedded chain the
 * watchdog plays that block: when ready transactions sit through two checks with no new block, it
 * mines one. Gapped ("queued") transactions are left alone: they wait for their nonce, as on a
 * real node.
 */
export function startAutomineWatchdog(options: AutomineWatchdogOptions): () => void {
  const { url, logger } = options;
  let stuckAt: string | undefined;
  let running = false;
  const check = async () => {
    if (running) return;
    running = true;
    try {
      // Someone turned automine off on purpose (a test of stuck transactions): not ours to undo.
      if ((await call(url, "anvil_getAutomine")) !== true) {
        stuckAt = undefined;
        return;
      }
      const status = (await call(url, "txpool_status")) as { pending?: string };
      const head = String(await call(url, "eth_blockNumber"));
      if (Number(status.pending ?? "0x0") === 0) {
        stuckAt = undefined;
        return;
      }
      if (stuckAt !== head) {
        stuckAt = head;
        return;
      }
      logger.warn(
        { url, ready: Number(status.pending) },
        "anvil left ready transactions unmined; mining a block",
      );
      await call(url, "evm_mine");
      stuckAt = undefined;
    } catch {
      // The node is down or restarting: its supervisor deals with that; check again next time.
      stuckAt = undefined;
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs ?? 2_000);
  timer.unref();
  return () => clearInterval(timer);
}
