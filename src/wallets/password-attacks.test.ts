import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KDF_PER_TENANT } from "../keys/kdf.js";
import { keysMade } from "../test-support/keys.js";
import { describeEachStore, POSTGRES_AVAILABLE, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "the-right-one";

const guess = (rt: TestRuntime, id: string, password: string) =>
  rt.wallets.unlock(id, 0, password).then(
    () => "ok",
    (e: { code: string }) => e.code,
  );

const walletRow = (rt: TestRuntime, id: string) =>
  rt.store.db.selectFrom("wallets").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

describeEachStore("concurrent wrong passwords", (target) => {
  let store: TempStore;
  let rt: TestRuntime;
  beforeAll(async () => {
    store = await tempStore(target);
    rt = await startTestRuntime({ store });
  });
  afterAll(async () => {
    await rt?.close();
    await store?.drop();
  });

  it("30 at once: exactly the allowed attempts are tried and counted, the rest are refused without a derivation", async () => {
    const [record] = await rt.wallets.create({ type: "KEYSTORE_V3", password: PASSWORD, addressQuantity: 1 });
    const id = record!.id;
    const codes = await Promise.all(Array.from({ length: 30 }, (_, i) => guess(rt, id, `wrong-${i}`)));
    expect(codes.filter((c) => c === "WRONG_PASSWORD")).toHaveLength(6);
    expect(codes.filter((c) => c === "WALLET_LOCKED")).toHaveLength(24);
    const row = await walletRow(rt, id);
    expect(row.failed_attempts).toBe(6);
    expect(row.locked_until).toBeGreaterThan(Date.now());
  });

  it.skipIf(target !== "postgres" || !POSTGRES_AVAILABLE)(
    "two instances on one PostgreSQL count every attempt: 30 split between them still stop at the lock",
    async () => {
      // The second instance fronts the first one's home chain, as two replicas behind a balancer do.
      const homeUrl = rt.devnet!.nodes.find((n) => n.chainId === 1001)!.url;
      const second = await startTestRuntime({ store, env: { CHAINGATE_UPSTREAMS: homeUrl } });
      try {
        const [record] = await rt.wallets.create({
          type: "KEYSTORE_V3",
          password: PASSWORD,
          addressQuantity: 1,
        });
        const id = record!.id;
        const codes = await Promise.all(
          Array.from({ length: 30 }, (_, i) => guess(i % 2 === 0 ? rt : second, id, `wrong-${i}`)),
        );
        expect(codes.filter((c) => c === "WRONG_PASSWORD")).toHaveLength(6);
        const row = await walletRow(rt, id);
        expect(row.failed_attempts).toBe(6);
      } finally {
        await second.close();
      }
    },
  );
});

describe("key derivation is shared fairly between tenants (standard KDF)", () => {
  let rt: TestRuntime;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_KDF: "standard" } });
    ({ alice, bob } = await keysMade(rt, { alice: "user", bob: "user" }));
  });
  afterAll(async () => rt?.close());

  const create = (key: string) =>
    rt.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
      { authorization: `Bearer ${key}` },
    );

  it("one tenant's flood of derivations is capped, and another tenant's creation is served in its turn", async () => {
    let started = Date.now();
    expect((await create(bob)).status).toBe(200);
    const alone = Date.now() - started;

    // Alice fills her share of the queue (and one more, refused); then Bob asks once.
    const finished: string[] = [];
    const flood = Array.from({ length: KDF_PER_TENANT + 1 }, () =>
      create(alice).then((answer) => {
        finished.push(`alice-${answer.status}`);
        return answer;
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    started = Date.now();
    const bobs = await create(bob);
    const underAttack = Date.now() - started;
    finished.push("bob");
    const answers = await Promise.all(flood);
    process.stdout.write(
      `kdf fairness: another tenant's wallet creation took ${alone} ms alone, ${underAttack} ms during a flood of ${KDF_PER_TENANT}\n`,
    );
    expect(bobs.status).toBe(200);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(KDF_PER_TENANT);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.json).toMatchObject({ code: "KDF_BUSY", retryable: true });
    // Bob was not served after Alice's whole queue: most of her derivations finished after his.
    const bobAt = finished.indexOf("bob");
    expect(finished.slice(bobAt + 1).filter((f) => f === "alice-200").length).toBeGreaterThanOrEqual(
      KDF_PER_TENANT - 4,
    );
  }, 120_000);
});
