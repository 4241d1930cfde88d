import { expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config/load-config.js";
import { receiptOf, result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { suiteRuntime } from "../test-support/test-runtime.js";

const rt = suiteRuntime({ env: { CHAINGATE_DEVNET_NODE_ACCOUNTS: "true" } });

it("--devnet-node-accounts lists anvil's dev accounts after the custody ones and lets them send (development aid)", async () => {
  const { json } = await rt.post("/wallet", { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 });
  const custody = (json as { address: string }[])[0]!.address;
  const accounts = await result<string[]>(rt, "eth_accounts");
  expect(accounts.indexOf(custody)).toBeLessThan(accounts.indexOf(DEV_ACCOUNT.toLowerCase()));
  const hash = await result<string>(rt, "eth_sendTransaction", [
    { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" },
  ]);
  expect((await receiptOf(rt, hash)).status).toBe("0x1");
  // A custody address still signs through the pipeline (and still needs its unlock).
  const locked = await rt.post("/eth_sign", { params: [custody, "0x01"] });
  expect((locked.json as { error: { message: string } }).error.message).toMatch(/^authentication needed/);
});

it("the switch is refused when chaingate fronts real upstreams", () => {
  expect(() =>
    loadConfig({
      env: { CHAINGATE_DEVNET_NODE_ACCOUNTS: "true", CHAINGATE_UPSTREAMS: "http://127.0.0.1:1" },
    }),
  ).toThrow(ConfigError);
});
