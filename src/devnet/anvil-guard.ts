/** The process between chaingate and an embedded anvil: saves anvil's state whole, and ends anvil when chaingate ends. */

import { constants } from "node:os";

/** The guard's exit codes when a signal stopped it (the shell's 128 + the signal's number). */
export const GUARD_SIGNAL_EXITS: ReadonlySet<number> = new Set(
  (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((signal) => 128 + constants.signals[signal]),
);

/** The environment variable naming the chain's state file, for the guard and for anvil. */
export const STATE_ENV = "CHAINGATE_ANVIL_STATE";

/**
 * The guard's source, run by `node -e` with anvil's command line as its arguments and the state
 * file's path in STATE_ENV. It starts anvil, prints `chaingate-anvil-pid <pid>`, and
 * passes anvil's output on. chaingate holds the guard's stdin; when chaingate exits for any reason
 * (even SIGKILL) that pipe closes, and the guard saves anvil's state a last time and stops it with
 * SIGTERM; a SIGINT, SIGTERM or SIGHUP to the guard does the same, and its exit code then names the
 * signal (128 + its number). When anvil dies on its own the guard exits too, and chaingate sees it.
 *
 * Why the guard saves, not anvil (decision 197): anvil reads its blocks and then its accounts when
 * it dumps its state, so a dump taken while it stores a block holds that block's nonces and
 * balances but not the block. Four in ten of anvil's own saves (`--state-interval`) were such
 * under a burst, and a chain restarted from one counts transactions it cannot find: the tracker
 * must then drop their records. The guard asks for the state (`anvil_dumpState`) every second, or
 * after four times the last dump's cost when that is longer, and keeps it only when it is whole
 * (decision 200): its head's block and every transaction's block are in it, and every sender's
 * nonce is one past its last transaction there (a check that no block was stored while the dump
 * was taken refused every dump under a burst). A dump that is not whole, and every dump of a chain
 * busy enough that one would likely not be, is taken with automine paused (decision 208). It
 * writes the file aside, syncs it and renames it over the last one, so a crash leaves the last
 * whole state, never half of one.
 *
 * Why it waits before the last save (decision 191): transactions leave anvil's pool only once
 * their block is stored, so the guard waits (5 s at most) until `txpool_status` shows none
 * pending. Nothing new comes in: the guard stops anvil only when chaingate is gone or stopping (or a
 * signal reached the guard, which a stop of chaingate's whole process group sends).
 *
 * Written as plain JavaScript in a string: it must run the same under tsx, vitest and the built
 * service, and a function's compiled text may name helpers the child does not have.
 */
export const ANVIL_GUARD_SCRIPT = String.raw`
const fs = require("node:fs");
const http = require("node:http");
const zlib = require("node:zlib");
const { spawn } = require("node:child_process");
const [binary, ...args] = process.argv.slice(1);
const statePath = process.env.${STATE_ENV};
// anvil in a process group of its own: a signal to chaingate's group (Ctrl-C in a terminal, kill
// -- -<pgid>) reaches the guard, which saves a last time and then stops anvil, and not anvil, which
// would otherwise die at once with the blocks since the last periodic save (decision 215).
const anvil = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
// The signal that stopped the guard, if one did: its exit code says so (128 + the signal's number).
let signalled;
let open = true;
const pass = (stream) => (chunk) => {
  if (open) stream.write(chunk);
};
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => { open = false; });
let url;
let seen = "";
let stopping = false;
let timer;
anvil.stdout.on("data", (chunk) => {
  pass(process.stdout)(chunk);
  if (url !== undefined) return;
  seen = (seen + chunk).slice(-4096);
  const listening = /Listening on (\S+):(\d+)/.exec(seen);
  if (listening) {
    url = { host: listening[1], port: Number(listening[2]) };
    timer = setTimeout(periodic, 1000);
  }
});
anvil.stderr.on("data", pass(process.stderr));
process.stdout.write("chaingate-anvil-pid " + anvil.pid + "\n");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function rpc(method, params, timeout) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
    const request = http.request(
      { ...url, method: "POST", path: "/", headers: { "content-type": "application/json" }, timeout },
      (response) => {
        const parts = [];
        response.on("data", (part) => parts.push(part));
        response.on("error", reject);
        response.on("end", () => {
          try {
            const answer = JSON.parse(Buffer.concat(parts).toString("utf8"));
            if (answer.error !== undefined) reject(new Error(method + ": " + JSON.stringify(answer.error)));
            else resolve(answer.result);
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on("timeout", () => request.destroy(new Error(method + " timed out")));
    request.on("error", reject);
    request.end(body);
  });
}

async function drained() {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const status = await rpc("txpool_status", [], 1000).catch(() => undefined);
    if (status === undefined || Number(status.pending) === 0) return;
    await sleep(20);
  }
}

// What makes a dump not whole, or undefined: a transaction whose block is not in it (nor the head's
// block), or a sender whose account nonce is past its last transaction there ("ahead").
function tornBy(state) {
  const best = Number(state.best_block_number);
  const stored = new Set();
  for (const block of state.blocks || []) stored.add(Number(block.header && block.header.number));
  if (!stored.has(best)) return "the head's block " + best + " is not in it";
  const last = new Map();
  for (const transaction of state.transactions || []) {
    const info = transaction.info;
    if (info === undefined || typeof info.from !== "string" || typeof info.nonce !== "number") continue;
    const number = Number(transaction.block_number);
    if (!stored.has(number) || number > best) return "a transaction's block is not in it";
    if (!(last.get(info.from) >= info.nonce)) last.set(info.from, info.nonce);
  }
  for (const [from, nonce] of last) {
    const account = state.accounts[from];
    if (account !== undefined && account.nonce > nonce + 1) return "ahead";
  }
  return undefined;
}

// A nonce set by hand (anvil_setNonce) also reads as ahead. Such a dump is kept once every dump
// for AHEAD_SETTLED_MS has been ahead at the same head: a block being stored shows as a new head
// within that time, and two dumps 50 ms apart on a busy machine could both fall inside one block's
// storing (decision 200).
const AHEAD_SETTLED_MS = 3000;
let ahead = null;
// The dump last written: an idle chain dumps the same bytes, which are then not written (nor synced) again.
let written = null;
// What the last dump cost (dumped, unpacked, checked and written), in ms: the dumps are paced by it,
// since a dump's cost grows with the chain and a dump taken back to back would load anvil. The wait
// for a paused anvil to settle is not counted: that is anvil finishing its own work, not ours.
let lastCost = 0;
let settleMs = 0;
async function saveOnce(paused) {
  const started = Date.now();
  settleMs = 0;
  try {
    const dumped = paused ? await pausedDump() : await rpc("anvil_dumpState", [], 60000);
    if (dumped === written) {
      if (lastHead !== null) noteHead(lastHead.head);
      return true;
    }
    const text = zlib.gunzipSync(Buffer.from(dumped.slice(2), "hex")).toString("utf8");
    const state = JSON.parse(text);
    const head = String(state.best_block_number);
    noteHead(Number(head));
    const torn = tornBy(state);
    if (torn !== undefined && torn !== "ahead") throw new Error(torn);
    if (torn === "ahead") {
      if (ahead === null || ahead.head !== head) ahead = { head, since: Date.now() };
      if (Date.now() - ahead.since < AHEAD_SETTLED_MS) return false;
    } else ahead = null;
    const aside = statePath + ".saving";
    const fd = fs.openSync(aside, "w", 0o600);
    try {
      fs.writeSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(aside, statePath);
    written = dumped;
    return true;
  } finally {
    lastCost = Date.now() - started - settleMs;
  }
}

// A dump taken while an automining anvil stores no block (decision 208). Under a burst anvil stores
// a block every few ms, and a dump of a long chain takes hundreds, so most plain dumps are torn; with
// automine paused for the dump, one is whole. Transactions sent meanwhile wait in the pool and are
// mined as one block when automine is back. A chain that does not automine (interval mining, or
// automine turned off on purpose) is dumped as it is.
async function pausedDump() {
  if ((await rpc("anvil_getAutomine", [], 5000)) !== true) return rpc("anvil_dumpState", [], 60000);
  try {
    // Inside the try: a pause that timed out may still have taken, and is then given back too.
    await rpc("evm_setAutomine", [false], 5000);
    const waited = Date.now();
    await settled();
    settleMs = Date.now() - waited;
    return await rpc("anvil_dumpState", [], 60000);
  } finally {
    await resumeMining();
  }
}

// anvil keeps storing the blocks it had already taken from the pool when automine stopped (under a
// burst on a loaded machine, seconds of them), so the dump waits until the head has not moved for
// 100 ms, 10 s at most (a dump taken before is checked like any other).
async function settled() {
  const deadline = Date.now() + 10000;
  let head = await rpc("eth_blockNumber", [], 5000);
  while (Date.now() < deadline) {
    await sleep(100);
    const now = await rpc("eth_blockNumber", [], 5000);
    if (now === head) return;
    head = now;
  }
}

// Automine back on, and what waited in the pool mined. Tried until anvil takes it: a chain left paused
// would never mine again (if anvil is gone, the guard exits with it).
async function resumeMining() {
  for (let i = 0; ; i++) {
    try {
      await rpc("evm_setAutomine", [true], 5000);
      break;
    } catch (error) {
      if (i === 0) process.stderr.write("chaingate-anvil-guard: automine not resumed yet: " + String(error && error.message) + "\n");
      await sleep(100);
    }
  }
  const status = await rpc("txpool_status", [], 5000).catch(() => undefined);
  if (status !== undefined && Number(status.pending) > 0) await rpc("evm_mine", [], 10000).catch(() => undefined);
}

// The chain's head at the last dump read, and when: a chain storing a block or more in the time a
// dump takes is dumped paused from the first try, since a plain dump of it is most likely torn.
let lastHead = null;
function busy() {
  return lastHead !== null && lastHead.blocksPerMs * lastCost >= 1;
}
function noteHead(head) {
  const now = Date.now();
  if (lastHead !== null && now > lastHead.at) lastHead = { head, at: now, blocksPerMs: Math.max(0, head - lastHead.head) / (now - lastHead.at) };
  else lastHead = { head, at: now, blocksPerMs: 0 };
}

let saving = Promise.resolve();
// A dump that is torn or ahead is tried again with mining paused.
function save(tries) {
  saving = saving.then(async () => {
    let last = "no dump was whole";
    let paused = busy();
    for (let i = 0; i < tries; i++) {
      try {
        if (await saveOnce(paused)) return;
      } catch (error) {
        last = String(error && error.message);
      }
      paused = true;
      await sleep(Math.max(50, lastCost));
    }
    process.stderr.write("chaingate-anvil-guard: state not saved after " + tries + " tries: " + last + "\n");
  });
  return saving;
}

// The next save after a second, or after four times the last dump's cost when that is longer: a
// guard that dumped back to back under a burst slowed anvil and saved less often (decision 208).
function periodic() {
  if (stopping) return;
  save(20).finally(() => {
    if (!stopping) timer = setTimeout(periodic, Math.max(1000, 4 * lastCost));
  });
}

function stop() {
  if (stopping) return;
  stopping = true;
  clearTimeout(timer);
  const last = url === undefined ? Promise.resolve() : drained().then(() => save(40));
  last.finally(() => anvil.kill("SIGTERM"));
}
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.on("error", stop);
process.stdin.resume();
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"])
  process.on(signal, () => {
    signalled ??= signal;
    stop();
  });
anvil.on("error", () => process.exit(1));
anvil.on("exit", (code) => process.exit(signalled === undefined ? (code ?? 1) : 128 + require("node:os").constants.signals[signalled]));
`;

/** The guard's command line for anvil's own: node runs the script, anvil's arguments after it. */
export function guardCommand(
  anvilArgs: readonly string[],
  statePath: string,
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  // NODE_OPTIONS is the service's (a profiler, a loader), not the guard's. anvil inherits the
  // state path too, which is how a later start knows a leftover anvil as this chain's.
  const env = { ...process.env, NODE_OPTIONS: "", [STATE_ENV]: statePath };
  return { command: process.execPath, args: ["-e", ANVIL_GUARD_SCRIPT, ...anvilArgs], env };
}
