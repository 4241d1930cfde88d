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
 * One job list in, one list out. Plain CommonJS, evaluated: the same code runs from the built
 * service and from the tests. Each signature is recovered and compared with the public key here,
 * where it was made: the event loop does neither.
 */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const lib = require(workerData.bindings);
parentPort.on("message", (jobs) => {
  const out = jobs.map(({ privateKey, hash, publicKey }) => {
    try {
      const { signature, recid } = lib.ecdsaSign(hash, privateKey);
      const point = lib.ecdsaRecover(signature, recid, hash, false);
      return { signature, recid, verified: Buffer.from(point).equals(Buffer.from(publicKey)) };
    } catch (error) {
      return { error: String((error && error.message) || error) };
    }
  });
  parentPort.postMessage(out);
});
`;

/** Answers from the worker, in the order of the list sent. */
type Answer = ThreadSignature | { error: string };

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
      this.queue.push({ privateKey, hash, publicKey, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // After this turn's other callers have asked (a group's signatures are asked together).
      setImmediate(() => this.flush());
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
    worker.postMessage(there.map(({ privateKey, hash, publicKey }) => ({ privateKey, hash, publicKey })));
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
    worker.on("message", (answers: Answer[]) => this.answered(answers));
    worker.on("error", (error: unknown) => this.lost(new Error(`signing thread failed: ${String(error)}`)));
    worker.on("exit", (code) => this.lost(new Error(`signing thread exited with code ${code}`)));
    // Held only while it has work: an idle signing thread never keeps the process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered(answers: Answer[]): void {
    const jobs = this.inFlight.shift();
    if (this.inFlight.length === 0) this.worker?.unref();
    if (jobs === undefined) return;
    for (const [i, job] of jobs.entries()) {
      const answer = answers[i];
      if (answer === undefined || "error" in answer)
        job.reject(new Error(`signing failed: ${answer === undefined ? "no answer" : answer.error}`));
      else {
        this.made.thread++;
        job.resolve({
          signature: new Uint8Array(answer.signature),
          recid: answer.recid,
          verified: answer.verified,
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
