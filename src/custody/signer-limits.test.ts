import { afterAll, beforeAll, expect, it } from "vitest";
import type { Envelope } from "../test-support/chain-helpers.js";
import { keysMade } from "../test-support/keys.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

let rt: TestRuntime;
let alice: string;
let bob: string;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  // A budget per hour: no token comes back between the unlock and the batch, however slow the machine.
  rt = await startTestRuntime({ env: { CHAINGATE_RATE_SIGN: "3/h" } });
  ({ alice, bob } = await keysMade(rt, { alice: "user", bob: "user" }));
});
afterAll(async () => {
  await rt?.close();
});

it("every signature counts against the key's sign budget, also inside one batch; another key is untouched", async () => {
  const created = await rt.post(
    "/wallet",
    { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 },
    bearer(alice),
  );
  const address = (created.json as { address: string }[])[0]!.address;
  // The unlock itself is a signer method: it takes the first of the 3 tokens.
  await rt.post(
    "/",
    { jsonrpc: "2.0", id: 0, method: "personal_unlockAccount", params: [address, "pw", 600] },
    bearer(alice),
  );
  const batch = await rt.post(
    "/",
    Array.from({ length: 5 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "eth_sign",
      params: [address, "0x01"],
    })),
    bearer(alice),
  );
  const answers = batch.json as Envelope[];
  expect(answers.filter((a) => typeof a.result === "string")).toHaveLength(2);
  const refused = answers.filter((a) => a.error !== undefined);
  expect(refused).toHaveLength(3);
  for (const answer of refused) {
    expect(answer.error).toMatchObject({ code: -32005, data: { code: "RATE_LIMITED", retryable: true } });
  }
  // Reads are not signatures, and Bob's budget is his own.
  const read = await rt.post(
    "/",
    { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
    bearer(alice),
  );
  expect((read.json as Envelope).result).toBe("0x3e9");
  const bobs = await rt.post("/", { jsonrpc: "2.0", id: 1, method: "eth_accounts", params: [] }, bearer(bob));
  expect((bobs.json as Envelope).result).toEqual([]);
});
