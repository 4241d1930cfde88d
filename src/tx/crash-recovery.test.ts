/** kill -9 of chaingate in the middle of a burst of POST /transaction, on each store: every answered hash is mined once, no nonce is left unused, and the address keeps working. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { anvilsFor, cliDataDir, rpc, startCli, waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";

const PASSWORD = "crash-test";

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

describeEachStore("kill -9 in a burst", (target) => {
  const dataDir = cliDataDir(`crash-${target}`);
  let store: TempStore;
  let env: Record<string, string>;
  beforeAll(async () => {
    store = await tempStore(target);
    env = {
      CHAINGATE_TRACKER_INTERVAL_MS: "100",
      ...(store.databaseUrl === undefined ? {} : { DATABASE_URL: store.databaseUrl }),
    };
  });
  afterAll(async () => store?.drop());

  it("kill -9 in the middle of a burst: every answered hash is mined once, and the address keeps working", async () => {
    const first = await startCli(dataDir, env);
    const wallet = (
      await post(first.url, "/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 })
    ).json as { id: string; address: string }[];
    const { id, address } = wallet[0]!;

    const answered: string[] = [];
    let killed = false;
    const burst = Array.from({ length: 300 }, (_, i) =>
      post(first.url, "/transaction", {
        wallet_id: id,
        password: PASSWORD,
        transaction: { to: DEV_ACCOUNT_2, value: String(i + 1) },
      })
        .then((answer) => {
          if (answer.status === 200) answered.push((answer.json as { tx_hash: string }).tx_hash);
          if (answered.length >= 80 && !killed) {
            killed = true;
            first.child.kill("SIGKILL");
          }
        })
        .catch(() => {}),
    );
    await Promise.all(burst);
    await first.exited;
    expect(killed).toBe(true);
    expect(answered.length).toBeGreaterThanOrEqual(80);
    expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);

    const second = await startCli(dataDir, env);
    try {
      // Every hash a client was given ends up mined, successfully.
      for (const hash of answered) {
        const mined = await waitUntil(
          async () => ((await rpc(second.url, "eth_getTransactionReceipt", [hash])) as unknown) !== null,
          20_000,
        );
        expect(mined, hash).toBe(true);
        expect(
          ((await rpc(second.url, "eth_getTransactionReceipt", [hash])) as { status: string }).status,
        ).toBe("0x1");
      }
      // Nothing mined twice: each request carried a distinct value, and the chain holds each at most once.
      await waitUntil(async () => {
        const list = (await post(second.url, "/list_all_transfers", { state: "queued" })).json as {
          result: { transfers: unknown[] };
        };
        return list.result.transfers.length === 0;
      }, 20_000);
      const nonce = Number(await rpc(second.url, "eth_getTransactionCount", [address, "latest"]));
      const values = new Set<string>();
      const list = (await post(second.url, "/list_all_transfers", { address, limit: 1000 })).json as {
        result: { transfers: { nonce: number; tx_hash: string; value: string; state: string }[] };
      };
      for (let n = 0; n < nonce; n++) {
        // A record superseded at its nonce is not a live one: after the restart a transaction the
        // node holds but does not count as pending is replaced after --resend-after-seconds (30 s),
        // which a slow run can reach, leaving `replaced` beside its mined replacement. (This assertion
        // failed once in a loaded run, its count not shown; that is the one correct way found to give two.)
        const atNonce = list.result.transfers.filter(
          (t) => t.nonce === n && t.state !== "failed" && t.state !== "dropped" && t.state !== "replaced",
        );
        expect(atNonce.length, `records for nonce ${n}`).toBe(1);
        const onChain = (await rpc(second.url, "eth_getTransactionByHash", [atNonce[0]!.tx_hash])) as {
          value: string;
        } | null;
        expect(onChain, `nonce ${n} mined`).not.toBeNull();
        expect(values.has(atNonce[0]!.value)).toBe(false);
        values.add(atNonce[0]!.value);
      }
      // The address's next transaction goes through without repair.
      const next = await post(second.url, "/transaction", {
        wallet_id: id,
        password: PASSWORD,
        transaction: { to: DEV_ACCOUNT_2, value: "999999" },
      });
      expect(next.status).toBe(200);
      const hash = (next.json as { tx_hash: string }).tx_hash;
      expect(
        await waitUntil(
          async () => (await rpc(second.url, "eth_getTransactionReceipt", [hash])) !== null,
          10_000,
        ),
      ).toBe(true);
      expect(
        Number(((await rpc(second.url, "eth_getTransactionByHash", [hash])) as { nonce: string }).nonce),
      ).toBe(nonce);
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
  }, 180_000);
});
