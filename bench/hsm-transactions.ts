/**
 * Signing throughput per key backend, side by side in one run: POST /transaction from a PKCS11
 * wallet on SoftHSM2 against the same from a keystore wallet (ABBA rounds, one chaingate process as
 * `npm start` runs it, in front of a bare anvil), and each backend's own signature rate in this
 * process (one hash after another, and four at once: the token's session pool).
 * Run: npm run bench:hsm   (writes bench/results/hsm-<timestamp>.json; needs Debian's softhsm2)
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { hexToBytes, keccak256, parseEther, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Pkcs11Token } from "../src/keys/pkcs11-token.js";
import { signingAccount } from "../src/keys/signing-account.js";
import { softHsmToken } from "../src/test-support/softhsm.js";
import { startGatewayProcess, startPlainAnvil } from "./bench-anvil.js";

const COUNT = Number(process.env.BENCH_TX_COUNT ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TO = "0x70997970C51812DC3A010C7901B1FCcCCc3F7Aa2";
const PASSWORD = "bench-password";

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-hsm-"));
const started: ChildProcess[] = [];
const token = softHsmToken("bench");
process.env.CHAINGATE_KDF = "light";
process.env.CHAINGATE_RATE_SIGN = "0";
process.env.CHAINGATE_RATE_WALLETS = "0";
const plain = await startPlainAnvil(started, ["--block-time", "1"]);
const gatewayProcess = await startGatewayProcess(plain.url, join(dir, "data"), started, token.env);
const gateway = new Pool(new URL(gatewayProcess.url).origin, { connections: CONCURRENCY });
const anvil = new Pool(new URL(plain.url).origin, { connections: 4 });

async function post(pool: Pool, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, json: JSON.parse(await response.body.text()) };
}

async function wallet(type: "KEYSTORE_V3" | "PKCS11"): Promise<{ id: string; address: string }> {
  const made = await post(gateway, "/wallet", {
    type,
    address_quantity: 1,
    ...(type === "KEYSTORE_V3" ? { password: PASSWORD } : {}),
  });
  if (made.status !== 200) throw new Error(`wallet ${type}: ${JSON.stringify(made.json)}`);
  const [record] = made.json as { id: string; address: string }[];
  await post(anvil, "/", {
    jsonrpc: "2.0",
    id: 1,
    method: "anvil_setBalance",
    params: [record!.address, toHex(parseEther("1000"))],
  });
  return record!;
}

/** COUNT sends with CONCURRENCY in flight: the accepted rate (requests/s). */
async function round(w: { id: string }, type: string): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT) {
        next++;
        const sent = await post(gateway, "/transaction", {
          wallet_id: w.id,
          ...(type === "KEYSTORE_V3" ? { password: PASSWORD } : {}),
          transaction: { to: TO, value: "1" },
        });
        if (sent.status !== 200) throw new Error(`${type}: ${JSON.stringify(sent.json)}`);
      }
    }),
  );
  return COUNT / ((performance.now() - start) / 1000);
}

/** Signatures per second of one backend in this process: one after another, and `parallel` at once. */
async function signRate(sign: (hash: Uint8Array) => Promise<unknown>, parallel: number): Promise<number> {
  const n = 400;
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) await sign(hexToBytes(keccak256(toHex(next++))));
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return { min: r(s[0]!), median: r(s[Math.floor(s.length / 2)]!), max: r(s.at(-1)!) };
};

try {
  const keystore = await wallet("KEYSTORE_V3");
  const hsm = await wallet("PKCS11");
  // Warm both (first unlock, the token's handles).
  await round(keystore, "KEYSTORE_V3");
  await round(hsm, "PKCS11");
  const ratios: number[] = [];
  const rates = { KEYSTORE_V3: [] as number[], PKCS11: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    // A B B A: the machine's drift falls on both sides alike.
    const a1 = await round(keystore, "KEYSTORE_V3");
    const b1 = await round(hsm, "PKCS11");
    const b2 = await round(hsm, "PKCS11");
    const a2 = await round(keystore, "KEYSTORE_V3");
    rates.KEYSTORE_V3.push(a1, a2);
    rates.PKCS11.push(b1, b2);
    ratios.push((b1 + b2) / (a1 + a2));
  }
  // Each backend's own signature rate, in this process.
  const key = generatePrivateKey();
  const soft = signingAccount(key);
  const onToken = new Pkcs11Token({
    module: token.module,
    token: token.label,
    pinFile: token.pinFile,
    timeoutMs: 5_000,
    sessions: 4,
  });
  await onToken.open();
  const made = await onToken.generate("bench-direct");
  const result = {
    at: new Date().toISOString(),
    count: COUNT,
    concurrency: CONCURRENCY,
    postTransactionRps: { keystore: stats(rates.KEYSTORE_V3), pkcs11: stats(rates.PKCS11) },
    pkcs11OverKeystore: stats(ratios),
    signaturesPerSecond: {
      keystoreChecked: Math.round(await signRate((h) => soft.sign!({ hash: toHex(h) }), 1)),
      softhsmRawSequential: Math.round(await signRate((h) => onToken.sign(made.id, h), 1)),
      softhsmRawFourSessions: Math.round(await signRate((h) => onToken.sign(made.id, h), 4)),
    },
    sameAddress: privateKeyToAccount(key).address === soft.address,
  };
  onToken.close();
  console.log(JSON.stringify(result, null, 2));
  const out = new URL("./results/", import.meta.url).pathname;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `hsm-${Date.now()}.json`), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await gateway.close();
  await anvil.close();
  for (const child of started) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  token.remove();
}
