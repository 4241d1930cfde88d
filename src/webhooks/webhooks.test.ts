import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anvilsFor, killStartedClis, startCli, waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { freePort } from "../test-support/ports.js";
import { describeEachStore, POSTGRES_AVAILABLE, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { type Delivery, type Receiver, startReceiver } from "../test-support/webhook-receiver.js";
import { verifySignature } from "./signature.js";

const PASSWORD = "webhook-password";
const ENV = {
  CHAINGATE_TRACKER_INTERVAL_MS: "100",
  CHAINGATE_WEBHOOK_ALLOW_PRIVATE: "true",
  CHAINGATE_WEBHOOK_INTERVAL_MS: "50",
  CHAINGATE_WEBHOOK_RETRY_BASE_MS: "200",
  CHAINGATE_BALANCE_CHECK_MS: "100",
  // Long enough that a receiver which hangs would hold everyone up if its slots were shared.
  CHAINGATE_WEBHOOK_TIMEOUT_MS: "120000",
};
const LIFECYCLE = ["transaction.queued", "transaction.sent", "transaction.mined", "transaction.confirmed"];

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text === "" ? undefined : JSON.parse(text) };
}

async function wallet(url: string): Promise<{ id: string; address: string }> {
  const made = await post(url, "/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
  expect(made.status, JSON.stringify(made.json)).toBe(200);
  return (made.json as { id: string; address: string }[])[0]!;
}

async function transfer(url: string, walletId: string, value = "1"): Promise<{ tx_hash: string }> {
  const sent = await post(url, "/transaction", {
    wallet_id: walletId,
    password: PASSWORD,
    transaction: { to: DEV_ACCOUNT_2, value },
  });
  expect(sent.status, JSON.stringify(sent.json)).toBe(200);
  return sent.json as { tx_hash: string };
}

/** Deliveries of one transaction's events, in arrival order. */
const ofTransaction = (receiver: Receiver, hash: string): Delivery[] =>
  receiver.deliveries.filter((d) => d.body.data.tx_hash === hash);

/** Each event id once, the lifecycle in order, every signature good under the secret. */
function expectLifecycle(deliveries: Delivery[], secret: string): void {
  const ids = deliveries.map((d) => d.body.id);
  expect(new Set(ids).size, "each event delivered once (the receiver acknowledged every one)").toBe(
    ids.length,
  );
  expect(deliveries.map((d) => d.body.type)).toEqual(LIFECYCLE);
  for (const d of deliveries) {
    const header = d.headers["x-chaingate-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, d.raw, header, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifySignature(`${secret}x`, d.raw, header, Math.floor(Date.now() / 1000))).toBe(false);
    expect(d.headers["x-chaingate-event-id"]).toBe(d.body.id);
  }
}

/** Waits until every one of `txs` has its whole lifecycle delivered, then checks each. */
async function expectEveryLifecycle(
  receiver: Receiver,
  txs: { tx_hash: string }[],
  secret: string,
  ms: number,
): Promise<void> {
  const all = () => txs.every((tx) => ofTransaction(receiver, tx.tx_hash).length >= LIFECYCLE.length);
  expect(await waitUntil(all, ms)).toBe(true);
  for (const tx of txs) expectLifecycle(ofTransaction(receiver, tx.tx_hash), secret);
}

describeEachStore("webhooks", (target) => {
  let store: TempStore;
  let rt: TestRuntime;
  let receiver: Receiver;

  beforeAll(async () => {
    store = await tempStore(target);
    rt = await startTestRuntime({ store, env: ENV });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await rt?.close();
    await store?.drop();
    await receiver?.down();
  });

  async function register(events: string[]): Promise<{ id: string; secret: string }> {
    const made = await rt.post("/webhooks", { url: receiver.url, events });
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    const hook = made.json as { id: string; secret: string };
    expect(hook.secret).toMatch(/^whsec_/);
    return hook;
  }

  it("a loopback receiver gets queued, sent, mined, confirmed for a transaction, in order, once each, signed", async () => {
    const hook = await register(["transaction.*"]);
    const w = await wallet(rt.url);
    const tx = await transfer(rt.url, w.id);
    expect(await waitUntil(() => ofTransaction(receiver, tx.tx_hash).length >= 4, 60_000)).toBe(true);
    const got = ofTransaction(receiver, tx.tx_hash);
    expectLifecycle(got, hook.secret);
    expect(got[3]!.body.data).toMatchObject({ tx_hash: tx.tx_hash, state: "confirmed", wallet_id: w.id });
    // The delivery log lists them as delivered; the secret is never shown again.
    const log = (await (await fetch(`${rt.url}/webhooks/${hook.id}/deliveries`)).json()) as {
      deliveries: { state: string; attempts: number }[];
    };
    expect(log.deliveries.filter((d) => d.state === "delivered").length).toBeGreaterThanOrEqual(4);
    const listed = (await (await fetch(`${rt.url}/webhooks`)).json()) as object[];
    expect(JSON.stringify(listed)).not.toContain(hook.secret);
    await fetch(`${rt.url}/webhooks/${hook.id}`, { method: "DELETE" });
  });

  it("a burst of transfers from one wallet (broadcasts marked sent together): each has its whole lifecycle, once", async () => {
    const hook = await register(["transaction.*"]);
    const w = await wallet(rt.url);
    const txs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => transfer(rt.url, w.id, String(i + 1))),
    );
    expect(new Set(txs.map((t) => t.tx_hash)).size).toBe(12);
    expect(
      await waitUntil(() => txs.every((t) => ofTransaction(receiver, t.tx_hash).length >= 4), 120_000),
    ).toBe(true);
    for (const t of txs) expectLifecycle(ofTransaction(receiver, t.tx_hash), hook.secret);
    await fetch(`${rt.url}/webhooks/${hook.id}`, { method: "DELETE" });
  });

  it("with the receiver down, every event arrives once it is back, in order; a delivery can be sent again by hand", async () => {
    const hook = await register(["transaction.*"]);
    await receiver.down();
    const w = await wallet(rt.url);
    const tx = await transfer(rt.url, w.id);
    // Down until the sender has failed several times (connection refused), whatever the clock says.
    const failing = async () => {
      const log = (await (await fetch(`${rt.url}/webhooks/${hook.id}/deliveries`)).json()) as {
        deliveries: { attempts: number; state: string; last_error: string | null }[];
      };
      // The tenant reads a class of failure, never the network error that names the operator's addresses.
      for (const d of log.deliveries)
        if (d.last_error !== null) expect(d.last_error).toBe("connection refused");
      return log.deliveries.some((d) => d.attempts >= 3 && d.state === "pending");
    };
    expect(await waitUntil(failing, 60_000)).toBe(true);
    expect(ofTransaction(receiver, tx.tx_hash)).toEqual([]);
    await receiver.up();
    expect(await waitUntil(() => ofTransaction(receiver, tx.tx_hash).length >= 4, 120_000)).toBe(true);
    expectLifecycle(ofTransaction(receiver, tx.tx_hash), hook.secret);

    // Redeliver: the same event (same id) once more.
    const log = (await (await fetch(`${rt.url}/webhooks/${hook.id}/deliveries?limit=1`)).json()) as {
      deliveries: { id: string; event_id: string }[];
    };
    const last = log.deliveries[0]!;
    const again = await rt.post(`/webhooks/${hook.id}/deliveries/${last.id}/redeliver`);
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(
      await waitUntil(
        () => receiver.deliveries.filter((d) => d.body.id === last.event_id).length === 2,
        60_000,
      ),
    ).toBe(true);
    await fetch(`${rt.url}/webhooks/${hook.id}`, { method: "DELETE" });
  });

  it("a balance alert raises wallet.balance_low once per fall, for the wallet's own tenant", async () => {
    const hook = await register(["wallet.balance_low"]);
    const first = await wallet(rt.url);
    const second = await wallet(rt.url);
    // Funded with 100 ETH on the devnet: below 1000 ETH is low at once.
    const thousand = (10n ** 21n).toString();
    for (const w of [first, second]) {
      const set = await fetch(`${rt.url}/wallet/${w.id}/balance_alert`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ chain_id: 1001, below: thousand }),
      });
      expect(set.status).toBe(200);
      // The second alert is set only after the first was raised: then, once the second arrives,
      // the first has been read again in later passes and must not have come twice.
      const raised = () =>
        receiver.deliveries.some(
          (d) => d.body.type === "wallet.balance_low" && d.body.data.wallet_id === w.id,
        );
      expect(await waitUntil(raised, 60_000)).toBe(true);
    }
    const ofFirst = receiver.deliveries.filter((d) => d.body.data.wallet_id === first.id);
    expect(ofFirst).toHaveLength(1);
    expect(ofFirst[0]!.body.data).toMatchObject({ chain_id: 1001, address: first.address, below: thousand });
    const unknown = await fetch(`${rt.url}/wallet/no-such-wallet/balance_alert`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chain_id: 1001, below: "1" }),
    });
    expect(unknown.status).toBe(404);
    await fetch(`${rt.url}/webhooks/${hook.id}`, { method: "DELETE" });
  });

  it("a receiver that hangs holds only its own slots: another endpoint gets every event meanwhile", async () => {
    const hanging = await startReceiver();
    hanging.hang = true;
    try {
      const slow = await rt.post("/webhooks", { url: hanging.url, events: ["transaction.*"] });
      const fast = await register(["transaction.*"]);
      const w = await wallet(rt.url);
      const txs = await Promise.all(
        Array.from({ length: 6 }, (_, i) => transfer(rt.url, w.id, String(i + 1))),
      );
      const all = () => txs.every((tx) => ofTransaction(receiver, tx.tx_hash).length >= 4);
      expect(await waitUntil(all, 100_000)).toBe(true);
      for (const tx of txs) expectLifecycle(ofTransaction(receiver, tx.tx_hash), fast.secret);
      // Meanwhile the hanging receiver was asked (up to its endpoint's 4 at once) and answered nothing.
      expect(hanging.held).toBeGreaterThan(0);
      expect(hanging.held).toBeLessThanOrEqual(4);
      expect(hanging.deliveries).toEqual([]);
      await fetch(`${rt.url}/webhooks/${(slow.json as { id: string }).id}`, { method: "DELETE" });
      await fetch(`${rt.url}/webhooks/${fast.id}`, { method: "DELETE" });
    } finally {
      await hanging.down();
    }
  });

  it("refuses bad registrations: unknown events, private URLs where not allowed, other tenants' hooks", async () => {
    const unknown = await rt.post("/webhooks", { url: receiver.url, events: ["transaction.exploded"] });
    expect(unknown.status).toBe(400);
    const scheme = await rt.post("/webhooks", { url: "file:///etc/passwd", events: ["*"] });
    expect(scheme.status).toBe(400);
    expect(scheme.json).toMatchObject({ code: "WEBHOOK_URL_REFUSED" });
    const missing = await fetch(`${rt.url}/webhooks/no-such-hook`);
    expect(missing.status).toBe(404);
  });
});

it("private and loopback receivers are refused unless the operator allows them", async () => {
  const rt = await startTestRuntime({ env: { CHAINGATE_MAX_WEBHOOKS_PER_KEY: "1" } });
  try {
    for (const url of [
      "http://127.0.0.1:9/x",
      "http://localhost/x",
      "http://10.1.2.3/x",
      "http://[::1]/x",
      "http://169.254.169.254/latest",
      "http://[::ffff:192.168.0.1]/x",
    ]) {
      const refused = await rt.post("/webhooks", { url, events: ["*"] });
      expect(refused.status, url).toBe(400);
      expect(refused.json, url).toMatchObject({ code: "WEBHOOK_URL_REFUSED" });
    }
    const ok = await rt.post("/webhooks", { url: "https://hooks.example.com/x", events: ["*"] });
    expect(ok.status).toBe(200);
    const over = await rt.post("/webhooks", { url: "https://hooks.example.com/y", events: ["*"] });
    expect(over.status).toBe(413);
    expect(over.json).toMatchObject({ code: "WEBHOOK_LIMIT" });
  } finally {
    await rt.close();
  }
});

/** A killed instance's leases last the request timeout and 30 s more: the default timeout keeps that short. */
const CRASH_ENV = { ...ENV, CHAINGATE_WEBHOOK_TIMEOUT_MS: "10000" };

it("kill -9 between a state change and its delivery: the events still arrive after a restart", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "chaingate-webhook-crash-"));
  const port = await freePort();
  const receiver = await startReceiver(port);
  try {
    const first = await startCli(dataDir, CRASH_ENV);
    const made = await post(first.url, "/webhooks", { url: receiver.url, events: ["transaction.*"] });
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    const hook = made.json as { id: string; secret: string };
    const w = await wallet(first.url);
    const tx = await transfer(first.url, w.id);
    // The receiver is not listening: the events are recorded and not delivered. Kill once the
    // transaction is confirmed (its four events are written with its states) and a delivery failed.
    const confirmed = async () => {
      const { json } = await post(first.url, "/list_all_transfers", { wallet_id: w.id });
      const transfers = (json as { result: { transfers: { state: string }[] } }).result.transfers;
      return transfers[0]?.state === "confirmed";
    };
    expect(await waitUntil(confirmed, 60_000)).toBe(true);
    const failed = async () => {
      const log = (await (await fetch(`${first.url}/webhooks/${hook.id}/deliveries`)).json()) as {
        deliveries: { attempts: number }[];
      };
      return log.deliveries.some((d) => d.attempts >= 1);
    };
    expect(await waitUntil(failed, 60_000)).toBe(true);
    first.child.kill("SIGKILL");
    await first.exited;
    expect(receiver.deliveries).toEqual([]);

    await receiver.up();
    const second = await startCli(dataDir, CRASH_ENV);
    expect(await waitUntil(() => ofTransaction(receiver, tx.tx_hash).length >= 4, 120_000)).toBe(true);
    expectLifecycle(ofTransaction(receiver, tx.tx_hash), hook.secret);
    second.child.kill("SIGTERM");
    await second.exited;
  } finally {
    killStartedClis();
    await receiver.down();
    await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000);
    for (const pid of anvilsFor(dataDir)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 300_000);

it("with the production retry settings, a receiver down for a full minute gets every event once it is back", async () => {
  // Default back-off (5 s doubling, with jitter): the minute is real, the deadline after it generous.
  const rt = await startTestRuntime({
    env: {
      CHAINGATE_TRACKER_INTERVAL_MS: "100",
      CHAINGATE_WEBHOOK_ALLOW_PRIVATE: "true",
    },
  });
  const receiver = await startReceiver();
  try {
    const made = await rt.post("/webhooks", { url: receiver.url, events: ["transaction.*"] });
    const hook = made.json as { id: string; secret: string };
    await receiver.down();
    const w = await wallet(rt.url);
    const txs = [await transfer(rt.url, w.id, "1"), await transfer(rt.url, w.id, "2")];
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    expect(receiver.deliveries).toEqual([]);
    await receiver.up();
    await expectEveryLifecycle(receiver, txs, hook.secret, 240_000);
  } finally {
    await rt.close();
    await receiver.down();
  }
}, 420_000);

describe.skipIf(!POSTGRES_AVAILABLE)("webhooks from two instances on one PostgreSQL", () => {
  it("each event is delivered once and in order, whichever instance changed the state or sends it", async () => {
    const store = await tempStore("postgres");
    const first = await startTestRuntime({ store, env: ENV });
    const homeUrl = first.devnet!.nodes.find((n) => n.chainId === 1001)!.url;
    const second = await startTestRuntime({
      store,
      dataDir: first.dataDir,
      env: { ...ENV, CHAINGATE_UPSTREAMS: homeUrl },
    });
    const receiver = await startReceiver();
    try {
      const made = await first.post("/webhooks", { url: receiver.url, events: ["transaction.*"] });
      const hook = made.json as { secret: string };
      const w = await wallet(first.url);
      const txs = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          transfer(i % 2 === 0 ? first.url : second.url, w.id, String(i + 1)),
        ),
      );
      await expectEveryLifecycle(receiver, txs, hook.secret, 120_000);
    } finally {
      await second.close();
      await first.close();
      await receiver.down();
      await store.drop();
    }
  }, 300_000);
});
