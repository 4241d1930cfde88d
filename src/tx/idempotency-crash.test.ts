import { mkdtempSync, rmSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../devnet/anvil-node.js";
import { nodeCall } from "../test-support/chain-helpers.js";
import { type Cli, killStartedClis, rpc, startCli, waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";

const PASSWORD = "idempotency-crash";
const dir = mkdtempSync(join(tmpdir(), "chaingate-idem-crash-"));
const dataDir = join(dir, "data");
let anvil: AnvilNode;
let proxy: RpcProxy | undefined;
let proxyUrl = "";
/** Calls of this method are held open (never answered): the request is cut off right there. */
let hold: string | undefined;
const held: ServerResponse[] = [];
const seen: string[] = [];

/** A node in front of anvil that can hang on one method, so chaingate can be killed mid-request. */
async function startProxy(target: string): Promise<void> {
  proxy = await startRpcProxy(target, (method, _id, response) => {
    if (method !== undefined) seen.push(method);
    if (method === undefined || method !== hold) return false;
    held.push(response);
    return true;
  });
  proxyUrl = proxy.url;
}

function release(): void {
  hold = undefined;
  for (const response of held.splice(0)) response.destroy();
}

beforeAll(async () => {
  anvil = await startAnvil({
    chainId: 1001,
    dir: join(dir, "anvil"),
    blockTime: 0,
    logger: pino({ level: "silent" }),
  });
  await startProxy(anvil.url);
});

afterAll(async () => {
  killStartedClis();
  release();
  await proxy?.close();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ENV = () => ({ CHAINGATE_UPSTREAMS: proxyUrl, CHAINGATE_TRACKER_INTERVAL_MS: "100" });

async function post(cli: Cli, path: string, body: unknown, key?: string) {
  const response = await fetch(`${cli.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Retries with the same key, as a client does after a failure, until it gets a hash. */
async function retryUntilHash(cli: Cli, body: unknown, key: string): Promise<string> {
  let hash: string | undefined;
  const answered = await waitUntil(async () => {
    const answer = await post(cli, "/transaction", body, key);
    if (answer.status === 200) hash = answer.json.tx_hash as string;
    else expect(answer.json.code, JSON.stringify(answer.json)).toBe("IDEMPOTENCY_IN_PROGRESS");
    return hash !== undefined;
  }, 60_000);
  expect(answered).toBe(true);
  return hash!;
}

async function killMidRequest(cli: Cli, method: string, body: unknown, key: string): Promise<void> {
  hold = method;
  seen.length = 0;
  const pending = post(cli, "/transaction", body, key).catch(() => undefined);
  expect(await waitUntil(() => seen.includes(method), 30_000)).toBe(true);
  cli.child.kill("SIGKILL");
  await cli.exited;
  await pending;
  release();
}

it("kill -9 of chaingate during an idempotent request: the retry gets the original transaction, or a fresh one if nothing was signed; exactly one each", async () => {
  const first = await startCli(dataDir, ENV());
  const [record] = (
    await post(first, "/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 })
  ).json as unknown as { id: string; address: string }[];
  const address = record!.address;
  await nodeCall(anvil.url, "anvil_setBalance", [address, "0x56BC75E2D63100000"]);
  const body = { wallet_id: record!.id, password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value: "7" } };

  // 1. Killed after signing and storing, while the node was being sent the transaction.
  await killMidRequest(first, "eth_sendRawTransaction", body, "order-1");
  const second = await startCli(dataDir, ENV());
  const started = Date.now();
  const hash1 = await retryUntilHash(second, body, "order-1");
  process.stdout.write(
    `idempotency crash: the signed request was answered ${Date.now() - started} ms after restart\n`,
  );
  expect(
    await waitUntil(
      async () => (await rpc(second.url, "eth_getTransactionReceipt", [hash1])) !== null,
      30_000,
    ),
  ).toBe(true);
  expect(((await rpc(second.url, "eth_getTransactionByHash", [hash1])) as { nonce: string }).nonce).toBe(
    "0x0",
  );
  // The same key keeps answering the same hash.
  expect((await post(second, "/transaction", body, "order-1")).json.tx_hash).toBe(hash1);

  // 2. Killed before anything was signed (while reading what gas it needs: a plain transfer reads
  // the recipient's code): the retry sends it, once.
  await killMidRequest(second, "eth_getCode", body, "order-2");
  const third = await startCli(dataDir, ENV());
  const hash2 = await retryUntilHash(third, body, "order-2");
  expect(hash2).not.toBe(hash1);
  expect(
    await waitUntil(
      async () => (await rpc(third.url, "eth_getTransactionReceipt", [hash2])) !== null,
      30_000,
    ),
  ).toBe(true);
  expect((await post(third, "/transaction", body, "order-2")).json.tx_hash).toBe(hash2);
  // Exactly one transaction per key: the address sent two in all.
  expect(await rpc(third.url, "eth_getTransactionCount", [address, "latest"])).toBe("0x2");
  const transfers = (await post(third, "/list_all_transfers", { limit: 100 })).json as {
    result: { transfers: { tx_hash: string; from: string }[] };
  };
  expect(
    transfers.result.transfers.filter((t) => t.from.toLowerCase() === address.toLowerCase()),
  ).toHaveLength(2);
}, 180_000);
