/** Property: whatever a node answers a send with (refusals in every wording, unknown words, 429/5xx, hangs, drops, refused-but-taken), every address converges to the chain. */
import type { ServerResponse } from "node:http";
import fc from "fast-check";
import { type Hex, parseEther, toHex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { NODE_WORDING_SAMPLES } from "../test-support/node-wording-samples.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { startRpcProxy } from "../test-support/rpc-proxy.js";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { openTransactions } from "../test-support/token-helpers.js";
import { heldNonces } from "./nonce-convergence.js";

const PASSWORD = "send-answers-password";

/** How the proxy answers one eth_sendRawTransaction. */
type Answer =
  | { kind: "pass" }
  | { kind: "refuse"; code: number; message: string }
  /** The node takes it, the client is told it was refused. */
  | { kind: "taken-refused"; code: number; message: string }
  | { kind: "status"; status: 429 | 500 | 502 | 503 }
  /** No answer until the client gives up; `taken`: the node got it all the same. */
  | { kind: "hang"; taken: boolean }
  /** The connection closes under the call; `taken`: after the node got it. */
  | { kind: "drop"; taken: boolean };

const refusal = fc.oneof(
  fc.constantFrom(...NODE_WORDING_SAMPLES.map(([, message, , code]) => ({ code: code ?? -32000, message }))),
  fc.record({ code: fc.integer({ min: -32700, max: -32000 }), message: fc.string({ maxLength: 40 }) }),
  fc.constant({ code: -32700, message: "Could not decode transaction: invalid RLP: remainder must be zero" }),
);
const answer: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "pass" as const }) },
  { weight: 3, arbitrary: refusal.map((r) => ({ kind: "refuse" as const, ...r })) },
  { weight: 1, arbitrary: refusal.map((r) => ({ kind: "taken-refused" as const, ...r })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(429, 500, 502, 503).map((status) => ({ kind: "status" as const, status })),
  },
  { weight: 1, arbitrary: fc.boolean().map((taken) => ({ kind: "hang" as const, taken })) },
  { weight: 1, arbitrary: fc.boolean().map((taken) => ({ kind: "drop" as const, taken })) },
);
/** One address's part of a run: its sends (some at once, some type 4 with its own authorization). */
const plan = fc.array(fc.record({ together: fc.integer({ min: 1, max: 3 }), delegate: fc.boolean() }), {
  minLength: 1,
  maxLength: 3,
});

describeEachStore("every answer to a send", (target) => {
  const own = ownNodes(`send-answers-${target}`);
  let store: TempStore;
  let rt: TestRuntime;
  let anvilUrl: string;
  /** The answers still to give, in order; when empty, sends pass. */
  let script: Answer[] = [];
  const held: ServerResponse[] = [];

  const forward = (call: unknown) =>
    fetch(anvilUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call),
    }).then((r) => r.text());

  beforeAll(async () => {
    store = await tempStore(target);
    const anvil = await own.anvil("a");
    anvilUrl = anvil.url;
    const proxy = await startRpcProxy(anvil.url, (method, id, response, call) => {
      if (method !== "eth_sendRawTransaction") return false;
      const next = script.shift() ?? { kind: "pass" };
      const error = (code: number, message: string) =>
        JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
      const reply = (body: string) => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(body);
      };
      switch (next.kind) {
        case "pass":
          return false;
        case "refuse":
          reply(error(next.code, next.message));
          return true;
        case "taken-refused":
          void forward(call).then(
            () => reply(error(next.code, next.message)),
            () => response.destroy(),
          );
          return true;
        case "status":
          response.writeHead(next.status);
          response.end();
          return true;
        case "hang":
          if (next.taken) void forward(call).catch(() => undefined);
          held.push(response);
          return true;
        case "drop":
          if (next.taken)
            void forward(call).then(
              () => response.destroy(),
              () => response.destroy(),
            );
          else response.destroy();
          return true;
      }
    });
    rt = await startTestRuntime({
      store,
      env: {
        CHAINGATE_UPSTREAMS: proxy.url,
        CHAINGATE_TRACKER_INTERVAL_MS: "100",
        CHAINGATE_UPSTREAM_TIMEOUT_MS: "1500",
        CHAINGATE_RESEND_AFTER_SECONDS: "1",
      },
    });
  }, 120_000);
  afterAll(async () => {
    for (const response of held) response.destroy();
    await rt?.close();
    await store?.drop();
  });

  async function wallet(): Promise<{ id: string; address: Hex }> {
    const { json } = await rt.post("/wallet", {
      type: "KEYSTORE_V3",
      password: PASSWORD,
      address_quantity: 1,
    });
    const [record] = json as { id: string; address: Hex }[];
    await nodeCall(anvilUrl, "anvil_setBalance", [record!.address, toHex(parseEther("10"))]);
    return record!;
  }
  const send = (w: { id: string; address: Hex }, delegate: boolean) =>
    rt.post("/transaction", {
      wallet_id: w.id,
      password: PASSWORD,
      transaction: delegate
        ? { to: w.address, authorizations: [{ delegate: DEV_ACCOUNT_2 }] }
        : { to: DEV_ACCOUNT_2, value: "1" },
    });

  it("converges: no address stuck past 30 s, no nonce gap, no nonce on chain twice, nothing left pending", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(answer, { minLength: 4, maxLength: 14 }),
        fc.array(plan, { minLength: 2, maxLength: 3 }),
        async (answers, plans) => {
          script = [...answers];
          const wallets = await Promise.all(plans.map(() => wallet()));
          // Every address runs its sends at the same time as the others; within one, `together` at once.
          await Promise.all(
            plans.map(async (steps, i) => {
              for (const step of steps)
                await Promise.all(
                  Array.from({ length: step.together }, () => send(wallets[i]!, step.delegate)),
                );
            }),
          );
          script = [];
          for (const w of wallets) {
            // Stuck no longer than 30 s: a send made now is mined by then.
            const started = Date.now();
            let hash: string | undefined;
            const mined = await waitUntil(async () => {
              if (hash === undefined) {
                const answer = await send(w, false);
                const body = answer.json as { tx_hash?: string; errors?: { tx_hash?: string } };
                hash = body.tx_hash ?? body.errors?.tx_hash;
                if (hash === undefined) return false;
              }
              // Mined as sent, or as the tracker's replacement at the same nonce.
              const row = await rt.store.db
                .selectFrom("transactions")
                .select("nonce")
                .where("tx_hash", "=", hash)
                .executeTakeFirstOrThrow();
              return (
                Number(await nodeCall(anvilUrl, "eth_getTransactionCount", [w.address, "latest"])) > row.nonce
              );
            }, 30_000);
            if (!mined)
              throw new Error(
                `${w.address} still stuck after ${Date.now() - started} ms: ${await explain(w.address, hash)} (answers ${JSON.stringify(answers)})`,
              );
            // Nothing left on its way: every record settled (mined, or failed and never on chain).
            await waitUntil(async () => (await openTransactions(rt, w.address)) === 0, 30_000);
            expect(await openTransactions(rt, w.address), await explain(w.address, hash)).toBe(0);
            const rows = await rt.store.db
              .selectFrom("transactions")
              .select(["nonce", "metadata", "from_address", "tx_hash", "state"])
              .where("from_address", "=", w.address)
              .execute();
            const onChain = await Promise.all(
              rows.map(
                async (row) =>
                  (await nodeCall(anvilUrl, "eth_getTransactionReceipt", [row.tx_hash])) !== null,
              ),
            );
            // A refused payload signed again byte for byte at the same nonce (the ledger gave the
            // nonce back) is one payload: rows are judged by their hash.
            const minedHashes = new Set(
              rows.filter((r) => r.state === "mined" || r.state === "confirmed").map((r) => r.tx_hash),
            );
            const mined_ = [
              ...new Map(rows.filter((r) => minedHashes.has(r.tx_hash)).map((r) => [r.tx_hash, r])).values(),
            ];
            // At most one payload of a nonce reached the chain, and the records say which.
            const nonces = mined_.map((r) => r.nonce);
            expect(new Set(nonces).size, JSON.stringify(rows)).toBe(nonces.length);
            for (const [i, row] of rows.entries())
              expect(onChain[i], `${row.tx_hash} is ${row.state}`).toBe(minedHashes.has(row.tx_hash));
            // No gap: the chain's nonce is exactly the nonces the mined records hold (their own authorizations included).
            const count = Number(await nodeCall(anvilUrl, "eth_getTransactionCount", [w.address, "latest"]));
            const heldByMined = heldNonces(mined_, 0);
            expect([...heldByMined].sort((a, b) => a - b)).toEqual(
              Array.from({ length: count }, (_, n) => n),
            );
          }
        },
      ),
      {
        numRuns: 4,
        endOnFailure: true,
        // A fixed seed in CI: the one whose runs hold a refusal of a transaction the node keeps
        // queued behind a gap (#41: it was recorded failed, then mined; see send-fate.ts). Set
        // SEND_ANSWERS_SEED=random (or a number) to explore.
        ...(process.env.SEND_ANSWERS_SEED === "random"
          ? {}
          : { seed: Number(process.env.SEND_ANSWERS_SEED ?? -585867787) }),
      },
    );
  }, 600_000);

  /** What the store and the chain say of an address, for a failure's message. */
  async function explain(address: Hex, last: string | undefined): Promise<string> {
    const rows = await rt.store.db
      .selectFrom("transactions")
      .select(["nonce", "state", "kind", "error", "tx_hash", "created_at", "sent_at"])
      .where("from_address", "=", address)
      .orderBy("created_at")
      .execute();
    const ledger = await rt.store.db
      .selectFrom("nonce_ledger")
      .select("next_nonce")
      .where("address", "=", address.toLowerCase())
      .execute();
    const latest = await nodeCall(anvilUrl, "eth_getTransactionCount", [address, "latest"]);
    const pending = await nodeCall(anvilUrl, "eth_getTransactionCount", [address, "pending"]);
    return `last ${last}; chain ${latest}/${pending}; ledger ${JSON.stringify(ledger)}; rows ${JSON.stringify(rows)}`;
  }
});
