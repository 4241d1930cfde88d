/** Password key derivation for keystores: scrypt on Node's native implementation, off the main thread. */
import { pbkdf2, randomBytes, scrypt } from "node:crypto";
import { scryptAsync } from "@noble/hashes/scrypt.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { FairGate } from "./fair-gate.js";

export interface ScryptParams {
  kdf: "scrypt";
  n: number;
  r: number;
  p: number;
  dklen: number;
  salt: string;
}

export interface Pbkdf2Params {
  kdf: "pbkdf2";
  c: number;
  prf: "hmac-sha256";
  dklen: number;
  salt: string;
}

export type KdfParams = ScryptParams | Pbkdf2Params;

/** geth's standard setting (N=2^18, ~256 MiB); light is for development and tests only. */
export const KDF_PRESETS = {
  standard: { n: 2 ** 18, r: 8, p: 1 },
  light: { n: 2 ** 12, r: 8, p: 1 },
} as const;

export type KdfPreset = keyof typeof KDF_PRESETS;

export function newScryptParams(preset: KdfPreset): ScryptParams {
  return { kdf: "scrypt", ...KDF_PRESETS[preset], dklen: 32, salt: randomBytes(32).toString("hex") };
}

/**
 * Largest cost we accept from an imported keystore: geth's standard (N=2^18, r=8: 256 MiB) and
 * about as long for PBKDF2. Beyond it a keystore is a denial of service, not more security.
 */
const MAX_SCRYPT_MEMORY = 256 * 1024 * 1024;
const MAX_PBKDF2_ROUNDS = 1_048_576;

export function kdfProblem(params: KdfParams): string | undefined {
  if (!/^([0-9a-fA-F]{2})+$/.test(params.salt)) return "kdfparams.salt must be hex";
  if (params.dklen !== 32) return "kdfparams.dklen must be 32";
  if (params.kdf === "scrypt") {
    const { n, r, p } = params;
    if (!Number.isInteger(n) || n < 2 || (n & (n - 1)) !== 0) return "kdfparams.n must be a power of two";
    if (!Number.isInteger(r) || r < 1 || !Number.isInteger(p) || p < 1 || p > 16)
      return "kdfparams r/p out of range";
    if (128 * n * r * p > MAX_SCRYPT_MEMORY)
      return "kdfparams ask for more than 256 MiB of scrypt memory (geth's standard, n=2^18 r=8, is the most accepted)";
    return undefined;
  }
  if (!Number.isInteger(params.c) || params.c < 1 || params.c > MAX_PBKDF2_ROUNDS)
    return "kdfparams.c out of range";
  return undefined;
}

/** Derivations one tenant may have running or waiting; more is a 429 (it is guessing or flooding). */
export const KDF_PER_TENANT = 16;
/** Derivations waiting in all; more is a 503. */
export const KDF_QUEUE = 256;

/**
 * Each standard scrypt holds 256 MiB; a small gate keeps memory bounded and leaves libuv threads
 * for other work. Tenants take turns at it, so one tenant's flood delays another by at most the
 * derivations already running.
 */
export class KeyDeriver {
  private readonly gate: FairGate;

  constructor(concurrency: number) {
    this.gate = new FairGate({ permits: concurrency, perTenant: KDF_PER_TENANT, queue: KDF_QUEUE });
  }

  /** How many derivations are waiting for a turn (exported as a metric). */
  get queued(): number {
    return this.gate.waiting;
  }

  derive(password: string, params: KdfParams, tenant = ""): Promise<Buffer> {
    const problem = kdfProblem(params);
    if (problem) {
      return Promise.reject(
        new ChaingateError(`Unsupported keystore: ${problem}`, { code: "INVALID_KEYSTORE" }),
      );
    }
    const salt = Buffer.from(params.salt, "hex");
    return this.gate.run(
      tenant,
      () =>
        new Promise<Buffer>((resolve, reject) => {
          const done = (error: Error | null, key: Buffer) => (error ? reject(error) : resolve(key));
          if (params.kdf === "scrypt") {
            const { n: N, r, p, dklen } = params;
            const maxmem = 128 * N * r * p + 32 * 1024 * 1024;
            // OpenSSL enforces RFC 7914's N < 2^(16r); keystores made elsewhere (the spec's own test
            // vector has N=2^18, r=1) can break it, and those go to the pure-JS implementation.
            if (N >= 2 ** (16 * r)) {
              scryptAsync(password.normalize("NFKC"), salt, { N, r, p, dkLen: dklen, maxmem }).then(
                (key) => resolve(Buffer.from(key)),
                reject,
              );
              return;
            }
            scrypt(password.normalize("NFKC"), salt, dklen, { N, r, p, maxmem }, done);
          } else {
            pbkdf2(password.normalize("NFKC"), salt, params.c, params.dklen, "sha256", done);
          }
        }),
    );
  }
}
