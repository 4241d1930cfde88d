import { describe, expect, it } from "vitest";
import { ApiKeyStore } from "../auth/api-keys.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { keysInForce } from "../test-support/keys.js";
import { suiteRuntime } from "../test-support/test-runtime.js";
import { newWallet, openTransactions, PASSWORD, transferBurst } from "../test-support/token-helpers.js";

/** The documented defaults: the test runtime's own overrides of the rate limits are cleared. */
const DEFAULT_LIMITS = { CHAINGATE_RATE_SIGN: "", CHAINGATE_RATE_WALLETS: "", CHAINGATE_RATE_READ: "" };

describe("a payout burst on the default configuration", () => {
  const rt = suiteRuntime({ env: { ...DEFAULT_LIMITS, CHAINGATE_TRACKER_INTERVAL_MS: "100" } });

  it("300 concurrent POST /transaction with no API key: 300 hashes", async () => {
    const wallet = await newWallet(rt);
    const answers = await transferBurst(rt, wallet.id, 300);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.map((a) => a.json)).toEqual([]);
    const hashes = new Set(answers.map((a) => (a.json as { tx_hash: string }).tx_hash));
    expect(hashes.size).toBe(300);
    expect(await waitUntil(async () => (await openTransactions(rt, wallet.address)) === 0, 60_000)).toBe(
      true,
    );
  }, 120_000);

  it("with API keys the documented per-key default applies: a burst past it is told exactly when to come back", async () => {
    const { key } = await new ApiKeyStore(rt.store).create("user", "payouts");
    const auth = { authorization: `Bearer ${key}` };
    // The key ring refreshes from the store twice a second: keys are in force once a keyless call is refused.
    await keysInForce(rt, [key]);
    const created = await rt.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
      auth,
    );
    const walletId = (created.json as { id: string }[])[0]!.id;
    const answers = await Promise.all(
      Array.from({ length: 120 }, () =>
        fetch(`${rt.url}/transaction`, {
          method: "POST",
          headers: { "content-type": "application/json", ...auth },
          body: JSON.stringify({
            wallet_id: walletId,
            password: PASSWORD,
            transaction: { to: DEV_ACCOUNT_2, value: "1" },
          }),
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    // 50 per second, each key: the first 50 pass at once; the rest pass or are told when to retry.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(50);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    for (const answer of answers.filter((a) => a.status === 429)) {
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await answer.json()).toMatchObject({ code: "RATE_LIMITED", retryable: true });
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    for (const answer of answers.filter((a) => a.status === 200)) await answer.text();
  }, 120_000);
});
