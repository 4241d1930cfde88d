/** The transfer every send bench signs (chaingate's sign-then-send baseline and the send floor alike), the JSON POST they make, and how a bench ends what it started. */
import type { ChildProcess } from "node:child_process";
import type { Pool } from "undici";

/** 1 wei to anvil's second dev account on the bench chain (1001), with fixed fees and gas. */
export const BENCH_TO = "0x70997970c51812dc3a010c7901b1fccccc3f7aa2";

export const benchTransfer = (nonce: number) =>
  ({
    chainId: 1001,
    type: "eip1559",
    nonce,
    to: BENCH_TO,
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: 50_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  }) as const;

/** Ends every process in `started` that is still running, and waits for each to exit. */
export async function stopProcesses(started: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    started.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    ),
  );
}

/** A JSON POST to a gateway (or node) pool: its status and body text. */
export async function post(
  pool: Pool,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const response = await pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, text: await response.body.text() };
}
