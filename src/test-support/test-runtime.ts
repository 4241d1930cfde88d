/** A whole chaingate on the embedded devnet in a temp dir, listening on a free port, for integration tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";
import { loadConfig } from "../config/load-config.js";
import { createLogger } from "../logging/create-logger.js";
import { type Runtime, startChaingate } from "../runtime.js";
import { type StoreTarget, type TempStore, tempStore } from "./stores.js";

export interface TestRuntime extends Runtime {
  dataDir: string;
  /** POSTs a JSON body (or raw text) and returns status and parsed JSON answer. */
  post(
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: unknown }>;
  close(): Promise<void>;
}

export interface TestRuntimeOptions {
  store?: StoreTarget | TempStore;
  env?: Record<string, string>;
  dataDir?: string;
  /** Receives every log line (JSON) at debug level, for tests that inspect logs. */
  logLines?: string[];
  /** Leave the relayer stopped, for tests that drive it by hand. */
  relay?: boolean;
  /** Deploy chaingate's contracts on configured chains (`chaingate contracts deploy` at start). */
  deploy?: boolean;
}

export async function startTestRuntime(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
  // A TempStore passed in is the caller's to drop (tests that restart chaingate on the same store).
  const external = typeof options.store === "object";
  const store =
    typeof options.store === "object" ? options.store : await tempStore(options.store ?? "sqlite");
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "chaingate-test-"));
  const logger = options.logLines
    ? // The access log writes its lines in batches: one entry a line.
      createLogger("debug", {
        write: (text: string) => {
          for (const line of text.split("\n")) if (line !== "") options.logLines!.push(line);
        },
      })
    : pino({ level: "silent" });
  /** The store and the folder made for this runtime: removed when it closes, or when its start fails. */
  const release = async () => {
    try {
      if (!external) await store.drop();
    } finally {
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  };
  let runtime: Awaited<ReturnType<typeof startChaingate>>;
  try {
    const config = loadConfig({
      env: {
        PORT: "0",
        CHAINGATE_DATA_DIR: dataDir,
        CHAINGATE_KDF: "light",
        LOG_LEVEL: "silent",
        // Tests send bursts on purpose; the rate-limit tests turn the limits back on.
        CHAINGATE_RATE_SIGN: "0",
        CHAINGATE_RATE_WALLETS: "0",
        ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
        ...options.env,
      },
    });
    runtime = await startChaingate(config, {
      logger,
      ...(options.relay === undefined ? {} : { relay: options.relay }),
      ...(options.deploy === undefined ? {} : { deployContracts: options.deploy }),
    });
  } catch (error) {
    // A refused configuration or start (a test of a bad configuration) leaves nothing behind either.
    await release();
    throw error;
  }
  const post = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${runtime.url}${path}`, {
      method: "POST",
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: text === "" ? undefined : JSON.parse(text) };
  };
  let closing: Promise<void> | undefined;
  return {
    ...runtime,
    dataDir,
    post,
    // Once, however often it is called (a test's own close and its file's clean-up), and the store
    // and folder are removed even when the stop throws.
    close: () => {
      closing ??= (async () => {
        try {
          await runtime.stop();
        } finally {
          await release();
        }
      })();
      return closing;
    },
  };
}

/**
 * The suite's runtime: started before its tests (a store of its own, dropped after them) and
 * stopped after them. What it returns stands for that runtime once the suite has started; used
 * before that, it throws.
 */
export function suiteRuntime(options: TestRuntimeOptions = {}): TestRuntime {
  let started: TestRuntime | undefined;
  beforeAll(async () => {
    started = await startTestRuntime(options);
  }, 120_000);
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as TestRuntime, {
    get(_, key) {
      if (started === undefined) throw new Error("the suite's runtime is used before the suite started");
      const value: unknown = Reflect.get(started, key);
      return typeof value === "function" ? value.bind(started) : value;
    },
  });
}
