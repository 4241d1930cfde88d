/** Helpers for tests of the Members and Token Management groups: calls, contract reads, waiting. */
import { type Abi, decodeFunctionResult, encodeEventTopics, encodeFunctionData, type Hex } from "viem";
import { MessageEndpoint } from "../contracts/artifacts.generated.js";
import { native, receiptOf, result } from "./chain-helpers.js";
import { expectDocumentedResult } from "./documented-result.js";
import { DEV_ACCOUNT_2 } from "./evm-fixtures.js";
import type { TestRuntime } from "./test-runtime.js";

export const PASSWORD = "token-test-password";

/** Calls an operation path with a plain params object; answers the envelope. */
export async function op(
  rt: TestRuntime,
  path: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const { status, json } = await rt.post(`/${path}`, { jsonrpc: "2.0", id: 7, params: [params] }, headers);
  if (status !== 200) throw new Error(`${path} answered HTTP ${status}`);
  return json as {
    id: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: { code?: string } };
  };
}

/** The operation's result; throws with the error when it failed. */
export async function ok<T = Record<string, unknown>>(
  rt: TestRuntime,
  path: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const answer = await op(rt, path, params, headers);
  if (answer.error) throw new Error(`${path} failed: ${JSON.stringify(answer.error)}`);
  // Every result the tests see is also what /openapi.json says it is.
  await expectDocumentedResult(rt, path, answer.result);
  return answer.result as T;
}

/** Reads a contract through chaingate's POST /eth_call, as a client would. */
export async function read(
  rt: TestRuntime,
  chainId: number,
  address: string,
  abi: Abi,
  functionName: string,
  args: unknown[] = [],
): Promise<unknown> {
  const data = encodeFunctionData({ abi, functionName, args } as never);
  const envelope = await native(rt, "eth_call", [{ to: address, data }, "latest"], `?chain_id=${chainId}`);
  if (envelope.error) throw new Error(`eth_call ${functionName} failed: ${JSON.stringify(envelope.error)}`);
  return decodeFunctionResult({ abi, functionName, data: envelope.result as Hex } as never);
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface TransportRow {
  id: string;
  kind: string;
  state: string;
  error: string | null;
  revert_data?: string | null;
  source_tx_hash: string | null;
  destination_tx_hash: string | null;
  amount: string | null;
  token_id: string | null;
  refund_state: "pending" | "done" | null;
  refund_tx_hash: string | null;
  source_confirmations?: number | null;
  release_at?: string | null;
  refund_at?: string | null;
}

export async function transport(rt: TestRuntime, id: string): Promise<TransportRow | undefined> {
  const { transports } = await ok<{ transports: TransportRow[] }>(rt, "list_all_transports", { limit: 1000 });
  return transports.find((t) => t.id === id);
}

/** Waits until the transport leaves sent/delivering, and answers it. */
export async function settled(rt: TestRuntime, id: string, timeoutMs = 30_000): Promise<TransportRow> {
  return waitFor(
    `transport ${id}`,
    async () => {
      const row = await transport(rt, id);
      return row && (row.state === "delivered" || row.state === "failed") ? row : undefined;
    },
    timeoutMs,
  );
}

export async function newWallet(rt: TestRuntime, password = PASSWORD): Promise<{ id: string; address: Hex }> {
  const { json } = await rt.post("/wallet", { type: "KEYSTORE_V3", password, address_quantity: 1 });
  const [record] = json as { id: string; address: Hex }[];
  return { id: record!.id, address: record!.address };
}

/**
 * What the transport tests start from: a member on chain 1002 (where transports go) and an ERC20 of
 * `walletId` on 1001, mined. Answers the token's address.
 */
export async function peerAndCoin(
  rt: TestRuntime,
  walletId: string,
  coin: { role: string; name: string; symbol: string; member?: string; supply?: string },
): Promise<string> {
  await ok(rt, "register_new_member", { name: coin.member ?? "Peer", chain_id: 1002, role: coin.role });
  const created = await ok(rt, "create_new_ERC20_token", {
    wallet_id: walletId,
    password: PASSWORD,
    name: coin.name,
    symbol: coin.symbol,
    initial_supply: coin.supply ?? "1000",
  });
  await receiptOf(rt, created.tx_hash as string);
  return created.address as string;
}

/** How many times the destination endpoint executed a transport: MessageDelivered events with its id on 1002. */
export async function deliveries(rt: TestRuntime, id: string): Promise<number> {
  const topics = encodeEventTopics({
    abi: MessageEndpoint.abi,
    eventName: "MessageDelivered",
    args: { id: id as Hex },
  });
  const logs = await result<unknown[]>(
    rt,
    "eth_getLogs",
    [{ address: rt.system!.endpoint, topics, fromBlock: "0x0", toBlock: "latest" }],
    "?chain_id=1002",
  );
  return logs.length;
}

/** POST /transaction of 1 wei from address 0 of a wallet made by newWallet, under an Idempotency-Key. */
export function sendWithKey(rt: TestRuntime, walletId: string, key: string, to: string = DEV_ACCOUNT_2) {
  return rt.post(
    "/transaction",
    { wallet_id: walletId, password: PASSWORD, transaction: { to, value: "1" } },
    { "Idempotency-Key": key },
  );
}

/**
 * Retries each key that has no hash yet, as a client does after a failure, until it gets one
 * (the first answer, or a fresh send when nothing was signed); fills `hashes`.
 */
export async function retryUntilHashed(
  // The same request as the first try: a retry with another body is refused as a reused key.
  send: (key: string) => Promise<{ status: number; json: unknown }>,
  keys: readonly string[],
  hashes: Map<string, string>,
  timeoutMs = 25_000,
): Promise<true> {
  for (const key of keys) {
    if (hashes.has(key)) continue;
    let last: unknown;
    const answered = await waitFor(
      `a hash for ${key}`,
      async () => {
        const answer = await send(key);
        last = { status: answer.status, body: answer.json };
        return answer.status === 200 ? (answer.json as { tx_hash: string }).tx_hash : undefined;
      },
      timeoutMs,
    ).catch(() => undefined);
    // The last answer is what a failure report needs: why this key never got its hash.
    if (answered === undefined) throw new Error(`no hash for ${key}; last answer ${JSON.stringify(last)}`);
    hashes.set(key, answered);
  }
  return true;
}

/** How many of an address's transactions are still on their way (queued or sent). */
export async function openTransactions(rt: TestRuntime, address: string): Promise<number> {
  const open = await rt.store.db
    .selectFrom("transactions")
    .select("id")
    .where("from_address", "=", address)
    .where("state", "in", ["queued", "sent"])
    .execute();
  return open.length;
}

/** Sends `amount` of `token` from `walletId` to `to` on chain 1002 and waits for its source receipt; the transport's id. */
export async function sendTransport(
  rt: TestRuntime,
  transport: { walletId: string; token: string; to: string; amount: string },
): Promise<string> {
  const sent = await ok(rt, "trasport_token", {
    wallet_id: transport.walletId,
    password: PASSWORD,
    token: transport.token,
    to: transport.to,
    amount: transport.amount,
    destination_chain_id: 1002,
  });
  await receiptOf(rt, sent.tx_hash as string);
  return sent.transport_id as string;
}

/** `count` POST /transaction at once from `walletId` (1, 2, ... wei to DEV_ACCOUNT_2): their answers, in order. */
export function transferBurst(
  rt: TestRuntime,
  walletId: string,
  count: number,
  fields: { index?: number; password?: string } = {},
): Promise<{ status: number; json: unknown }[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      rt.post("/transaction", {
        wallet_id: walletId,
        password: PASSWORD,
        ...fields,
        transaction: { to: DEV_ACCOUNT_2, value: String(i + 1) },
      }),
    ),
  );
}
