/** The policies a signature reads: the asks of one turn share one read, and none misses a policy committed before it was asked. */
import type { CompiledQuery } from "kysely";
import { expect, it } from "vitest";
import type { Store } from "../store/database.js";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import { PolicyStore } from "./policy-store.js";

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

describeEachStore("PolicyStore.applying", (target) => {
  const opened = suiteStore(target);

  /** A wallet row of its own (a policy must name a wallet that exists). */
  const wallet = async (id: string) => {
    await opened.store.db
      .insertInto("wallets")
      .values({
        id,
        type: "KEYSTORE_V3",
        source: "generated",
        kdf: "light",
        address_count: 0,
        failed_attempts: 0,
        locked_until: 0,
        created_at: Date.now(),
      })
      .execute();
    return id;
  };

  /**
   * A PolicyStore whose store counts the statements it runs; each answer waits for `gate` once its
   * statement has run and its connection is free again.
   */
  const counted = (gate: () => Promise<void> = async () => {}) => {
    let statements = 0;
    const db = new Proxy(opened.store.db, {
      get(target, key) {
        if (key === "executeQuery")
          return async (query: CompiledQuery) => {
            statements++;
            const result = await target.executeQuery(query);
            await gate();
            return result;
          };
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const store: Store = { ...opened.store, db };
    return { policies: new PolicyStore(store), statements: () => statements };
  };

  it("twenty asks of one turn for one wallet are one statement; each caller gets its own objects; the next turn reads again", async () => {
    const id = await wallet("w-shared");
    await new PolicyStore(opened.store).create(
      { name: "cap", wallet_id: id, rules: { max_value_per_tx: "5" } },
      null,
    );
    const { policies, statements } = counted();
    const answers = await Promise.all(Array.from({ length: 20 }, () => policies.applying(id, null)));
    expect(statements()).toBe(1);
    for (const answer of answers) expect(answer.map((p) => p.name)).toEqual(["cap"]);
    expect(new Set(answers.map((a) => a[0])).size).toBe(20);
    // Asks for another wallet or with a key are reads of their own, in the same turn.
    const other = await wallet("w-other");
    await Promise.all([
      policies.applying(id, null),
      policies.applying(other, null),
      policies.applying(id, "k"),
    ]);
    expect(statements()).toBe(4);
    await policies.applying(id, null);
    expect(statements()).toBe(5);
  });

  it("an ask made after a policy was committed sees it, though an ask from before is still being read", async () => {
    const id = await wallet("w-fresh");
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { policies, statements } = counted(() => held);
    const before = policies.applying(id, null);
    // The first read has run and waits with its answer: it holds no policy.
    await waitFor(() => statements() === 1);
    await new PolicyStore(opened.store).create(
      { name: "late", wallet_id: id, rules: { max_value_per_tx: "1" } },
      null,
    );
    const after = policies.applying(id, null);
    release();
    expect(await before).toEqual([]);
    expect((await after).map((p) => p.name)).toEqual(["late"]);
  });
});
