/** The process between chaingate and an embedded anvil: ends anvil when chaingate ends, only once anvil's pool has drained. */

/**
 * The guard's source, run by `node -e` with anvil's command line as its arguments. It starts anvil,
 * prints `chaingate-anvil-pid <pid>`, and passes anvil's output on. chaingate holds the guard's
 * stdin; when chaingate exits for any reason (even SIGKILL) that pipe closes, and the guard stops
 * anvil with SIGTERM, which makes anvil write its state file. When anvil dies on its own the guard
 * exits too, and chaingate sees it.
 *
 * Why it waits before the SIGTERM (decision 191): anvil writes its accounts and its blocks apart.
 * A SIGTERM while it mines a block the accounts are written with that block's nonces but the block
 * is not: after the restart the chain counts the transactions and has none of them, so no record
 * can ever find its receipt. Transactions leave anvil's pool only once their block is stored, so
 * the guard waits (5 s at most) until `txpool_status` shows none pending. Nothing new comes in: the
 * guard stops anvil only when chaingate is gone or stopping.
 *
 * Written as plain JavaScript in a string: it must run the same under tsx, vitest and the built
 * service, and a function's compiled text may name helpers the child does not have.
 */
export const ANVIL_GUARD_SCRIPT = String.raw`
const http = require("node:http");
const { spawn } = require("node:child_process");
const [binary, ...args] = process.argv.slice(1);
const anvil = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
let open = true;
const pass = (stream) => (chunk) => {
  if (open) stream.write(chunk);
};
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => { open = false; });
let url;
let seen = "";
anvil.stdout.on("data", (chunk) => {
  pass(process.stdout)(chunk);
  if (url !== undefined) return;
  seen = (seen + chunk).slice(-4096);
  const listening = /Listening on (\S+):(\d+)/.exec(seen);
  if (listening) url = { host: listening[1], port: Number(listening[2]) };
});
anvil.stderr.on("data", pass(process.stderr));
process.stdout.write("chaingate-anvil-pid " + anvil.pid + "\n");

function pendingCount() {
  return new Promise((resolve) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "txpool_status", params: [] });
    const request = http.request(
      { ...url, method: "POST", path: "/", headers: { "content-type": "application/json" }, timeout: 1000 },
      (response) => {
        let text = "";
        response.on("data", (part) => { text += part; });
        response.on("end", () => {
          try {
            resolve(Number(JSON.parse(text).result.pending));
          } catch {
            resolve(0);
          }
        });
      },
    );
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(0));
    request.end(body);
  });
}

async function drained() {
  const deadline = Date.now() + 5000;
  while (url !== undefined && Date.now() < deadline) {
    if ((await pendingCount()) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  drained().finally(() => anvil.kill("SIGTERM"));
}
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.on("error", stop);
process.stdin.resume();
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, stop);
anvil.on("error", () => process.exit(1));
anvil.on("exit", (code) => process.exit(code ?? 1));
`;

/** The guard's command line for anvil's own: node runs the script, anvil's arguments after it. */
export function guardCommand(anvilArgs: readonly string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: ["-e", ANVIL_GUARD_SCRIPT, ...anvilArgs] };
}
