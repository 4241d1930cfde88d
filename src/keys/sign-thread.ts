/** Keystore signatures made and verified on a worker thread when several are asked at once, so the event loop serves requests meanwhile. */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** A signature made from a private key, its recovery id checked against the key's public key. */
export interface ThreadSignature {
  /** r || s, low-s. */
  signature: Uint8Array;
  recid: number;
  /** Whether (signature, recid) recovered to the public key given (false: a faulty signature). */
  verified: boolean;
}

interface Job {
  privateKey: Uint8Array;
  hash: Uint8Array;
  publicKey: Uint8Array;
  resolve: (signature: ThreadSignature) => void;
  reject: (error: Error) => void;
}

interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

/**
 * A list of jobs goes to the worker as one buffer, and comes back as one, each moved rather than
 * copied (a list of objects of byte arrays cost the event loop 3 µs a job to clone out and again to
 * read back). A job is its private key, the hash, the public key's length and the public key; an
 * answer is r || s, the recovery id and what the check found.
 */
const JOB = 32 + 32 + 1 + 65;
const ANSWER = 64 + 1 + 1;
/** The answer's last byte. */
const VERIFIED = 1;
const MISMATCH = 0;
const FAILED = 2;

/**
 * Plain CommonJS, evaluated: the same code runs from the built service and from the tests. Each
 * signature is recovered and compared with the public key here, where it was made: the event loop
 * does neither. The jobs' buffer (private keys in it) is zeroed once read.
 */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const lib = require(workerData.bindings);
parentPort.on("message", (jobs) => {
  const count = jobs.length / ${JOB};
  const out = new Uint8Array(count * ${ANSWER});
  const errors = [];
  for (let i = 0; i < count; i++) {
    const at = i * ${JOB};
    const hash = jobs.subarray(at + 32, at + 64);
    const publicKey = Buffer.from(jobs.buffer, jobs.byteOffset + at + 65, jobs[at + 64]);
    const answer = i * ${ANSWER};
    try {
      const { signature, recid } = lib.ecdsaSign(hash, jobs.subarray(at, at + 32));
      const point = lib.ecdsaRecover(signature, recid, hash, false);
      out.set(signature, answer);
      out[answer + 64] = recid;
      out[answer + 65] = Buffer.from(point.buffer, point.byteOffset, point.length).equals(publicKey) ? ${VERIFIED} : ${MISMATCH};
    } catch (error) {
      out[answer + 65] = ${FAILED};
      errors[i] = String((error && error.message) || error);
    }
  }
  jobs.fill(0);
  parentPort.postMessage({ out, errors }, [out.buffer]);
});
`;

/** Answers from the worker, in the order of the list sent. */
interface Answers {
  out: Uint8Array;
  /** By job, where its signing threw. */
  errors: (string | undefined)[];
}

/** One buffer of the jobs, laid out as the worker reads them. */
function packJobs(jobs: readonly Job[]): Uint8Array<ArrayBuffer> {
  const packed = new Uint8Array(jobs.length * JOB);
  for (const [i, { privateKey, hash, publicKey }] of jobs.entries()) {
    const at = i * JOB;
    packed.set(privateKey, at);
    packed.set(hash, at + 32);
    packed[at + 64] = publicKey.length;
    packed.set(publicKey, at + 65);
  }
  return packed;
}

/**
 * A signature costs about 45 µs to make and 60 µs to verify (libsecp256k1 on this class of CPU):
 * a sixth of what a sent transaction costs the event loop, which under load is what bounds the rate
 * (#42). Hashes asked in one turn of the event loop go to the worker as one message; a turn that
 * asks one alone signs it on the event loop (a worker's round trip would only add latency to a
 * caller who is waiting alone). A worker that fails or exits hands every job back to the event loop.
 */
export class SignThread {
  private worker: Worker | undefined;
  private failed = false;
  private queue: Job[] = [];
  private scheduled = false;
  /** Lists sent and not yet answered, in the order sent (the worker answers in order). */
  private readonly inFlight: Job[][] = [];
  /** Signatures the worker made, and those the event loop made (for tests and the curious). */
  readonly made = { thread: 0, loop: 0 };

  constructor(
    private readonly native: NativeSecp256k1,
    private readonly bindingsPath: string,
  ) {}

  sign(privateKey: Uint8Array, hash: Uint8Array, publicKey: Uint8Array): Promise<ThreadSignature> {
    return new Promise((resolve, reject) => {
      // What the worker's layout holds (see JOB): anything else is a caller's bug.
      if (privateKey.length !== 32 || hash.length !== 32 || publicKey.length > 65) {
        reject(
          new RangeError("a signature needs a 32-byte key and hash, and a public key of at most 65 bytes"),
        );
        return;
      }
      this.queue.push({ privateKey, hash, publicKey, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // Once the callers running now have asked (a group asks its signatures in one synchronous
      // pass): a microtask, not the next turn of the loop, which a lone signature waited for
      // (decision 211).
      queueMicrotask(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const jobs = this.queue;
    this.queue = [];
    if (jobs.length === 1 && this.inFlight.length === 0) {
      this.here(jobs);
      return;
    }
    const worker = this.started();
    if (worker === undefined) {
      this.here(jobs);
      return;
    }
    // The worker takes the first half and the event loop signs the rest meanwhile: a group's
    // signatures are made inside its store transaction, so their time is the group's, not only CPU.
    const there = jobs.slice(0, Math.ceil(jobs.length / 2));
    this.inFlight.push(there);
    worker.ref();
    const packed = packJobs(there);
    worker.postMessage(packed, [packed.buffer]);
    this.here(jobs.slice(there.length));
  }

  /** Signs and verifies on the event loop: the same checks the worker makes. */
  private here(jobs: readonly Job[]): void {
    this.made.loop += jobs.length;
    for (const job of jobs) {
      try {
        const { signature, recid } = this.native.ecdsaSign(job.hash, job.privateKey);
        const point = this.native.ecdsaRecover(signature, recid, job.hash, false);
        job.resolve({ signature, recid, verified: Buffer.from(point).equals(job.publicKey) });
      } catch (error) {
        job.reject(error as Error);
      }
    }
  }

  private started(): Worker | undefined {
    if (this.worker !== undefined || this.failed) return this.worker;
    const worker = new Worker(WORKER, { eval: true, workerData: { bindings: this.bindingsPath } });
    worker.on("message", (answers: Answers) => this.answered(answers));
    worker.on("error", (error: unknown) => this.lost(new Error(`signing thread failed: ${String(error)}`)));
    worker.on("exit", (code) => this.lost(new Error(`signing thread exited with code ${code}`)));
    // Held only while it has work: an idle signing thread never keeps the process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered({ out, errors }: Answers): void {
    const jobs = this.inFlight.shift();
    if (this.inFlight.length === 0) this.worker?.unref();
    if (jobs === undefined) return;
    for (const [i, job] of jobs.entries()) {
      const at = i * ANSWER;
      const status = out.length >= at + ANSWER ? out[at + 65] : FAILED;
      if (status === FAILED) job.reject(new Error(`signing failed: ${errors[i] ?? "no answer"}`));
      else {
        this.made.thread++;
        job.resolve({
          signature: out.subarray(at, at + 64),
          recid: out[at + 64]!,
          verified: status === VERIFIED,
        });
      }
    }
  }

  /** The worker is gone: what it held is signed here, and so is everything after. */
  private lost(_error: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.worker = undefined;
    for (const jobs of this.inFlight.splice(0)) this.here(jobs);
  }
}

let thread: SignThread | undefined | null = null;

/** The process's signing thread, where libsecp256k1's bindings load (none: signatures are made as before). */
export function signThread(): SignThread | undefined {
  if (thread === null) {
    try {
      const require = createRequire(import.meta.url);
      const path = require.resolve("secp256k1/bindings");
      thread = new SignThread(require(path) as NativeSecp256k1, path);
    } catch {
      thread = undefined;
    }
  }
  return thread;
}
