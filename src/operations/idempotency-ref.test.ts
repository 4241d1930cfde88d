/** An operation run under an Idempotency-Key stores the key's reference on every transaction it signs, handed to it in the open. */
import type { Hex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fundedCustody } from "../test-support/custody-helpers.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "idempotency-ref-password";

let rt: TestRuntime;
let wallet: { id: string; address: Hex };

beforeAll(async () => {
  rt = await startTestRuntime();
  wallet = await fundedCustody(rt, { password: PASSWORD, unlock: false });
}, 120_000);
afterAll(async () => {
  await rt?.close();
});

const txHashOf = (answer: { json: unknown }) =>
  ((answer.json as { result?: { tx_hash?: string } }).result?.tx_hash ??
    (answer.json as { tx_hash?: string }).tx_hash) as string;

const refsOf = async (kind: string) =>
  (
    await rt.store.db
      .selectFrom("transactions")
      .select(["tx_hash", "idempotency_ref"])
      .where("kind", "=", kind)
      .execute()
  ).map((row) => ({ hash: row.tx_hash, ref: row.idempotency_ref }));

it("a token operation and a member registration carry their request's key reference; a replay signs nothing", async () => {
  const body = {
    wallet_id: wallet.id,
    password: PASSWORD,
    name: "Ref Coin",
    symbol: "REF",
    initial_supply: "1000",
  };
  const first = await rt.post("/create_new_ERC20_token", body, { "idempotency-key": "token-1" });
  expect((first.json as { error?: unknown }).error, JSON.stringify(first.json)).toBeUndefined();
  const hash = txHashOf(first);
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(await refsOf("create_new_ERC20_token")).toEqual([{ hash, ref: "/create_new_ERC20_token\ntoken-1" }]);
  const again = await rt.post("/create_new_ERC20_token", body, { "idempotency-key": "token-1" });
  expect(txHashOf(again)).toBe(hash);
  expect(await refsOf("create_new_ERC20_token")).toHaveLength(1);

  const member = await rt.post(
    "/register_new_member",
    { name: "ref-member", chain_id: 1001, role: "PARTICIPANT" },
    { "idempotency-key": "member-1" },
  );
  expect((member.json as { error?: unknown }).error, JSON.stringify(member.json)).toBeUndefined();
  const registered = await refsOf("register_new_member");
  expect(registered).toHaveLength(1);
  expect(registered[0]!.ref).toBe("/register_new_member\nmember-1");

  // Without a key, nothing is stored for it.
  const plain = await rt.post("/create_new_ERC20_token", { ...body, name: "Plain Coin", symbol: "PLN" });
  expect((plain.json as { error?: unknown }).error, JSON.stringify(plain.json)).toBeUndefined();
  const unkeyed = (await refsOf("create_new_ERC20_token")).find((row) => row.hash === txHashOf(plain));
  expect(unkeyed?.ref).toBeNull();
});
