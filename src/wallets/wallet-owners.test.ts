/** Wallets made before API keys existed stay reachable: keys create says so, an admin lists them with their owner, and one is given to a key. */
import { expect, it } from "vitest";
import { runKeysCommand } from "../auth/keys-command.js";
import { loadConfig } from "../config/load-config.js";
import { waitUntil } from "../test-support/cli.js";
import { suiteRuntime } from "../test-support/test-runtime.js";
import { newWallet } from "../test-support/token-helpers.js";
import { parseWalletsCommand, runWalletsCommand } from "./wallets-command.js";

const rt = suiteRuntime();

it("keys create says unowned wallets exist; an admin lists them with owner null; `wallets assign` gives one to a key", async () => {
  const tour = await newWallet(rt, "tour-password");
  const config = loadConfig({ env: { CHAINGATE_DATA_DIR: rt.dataDir, CHAINGATE_KDF: "light" } });
  const admin = JSON.parse(await runKeysCommand({ action: "create", role: "admin", rest: [] }, config)) as {
    key: string;
    notice?: string;
  };
  expect(admin.notice).toMatch(/1 wallet\(s\) made before API keys existed belong to no key/);
  expect(admin.notice).toContain("chaingate wallets assign <wallet-id> --key <key-id>");
  const user = JSON.parse(
    await runKeysCommand({ action: "create", role: "user", name: "app", rest: [] }, config),
  ) as {
    id: string;
    key: string;
  };
  const list = async (key: string) => {
    const response = await fetch(`${rt.url}/wallet`, { headers: { authorization: `Bearer ${key}` } });
    return {
      status: response.status,
      body: (await response.json()) as { id: string; owner?: string | null }[],
    };
  };
  // Keys are on once the key ring has read them: a request without one is then refused.
  expect(await waitUntil(async () => (await fetch(`${rt.url}/wallet`)).status === 401, 20_000)).toBe(true);
  // Both new keys known to the service (the key ring reads keys made by another process in its own time).
  expect(
    await waitUntil(
      async () => (await list(admin.key)).status === 200 && (await list(user.key)).status === 200,
      20_000,
    ),
  ).toBe(true);
  const seen = await list(admin.key);
  expect(seen.body).toEqual(expect.arrayContaining([expect.objectContaining({ id: tour.id, owner: null })]));
  expect((await list(user.key)).body).toEqual([]);
  // Given to the user's key from the command line, then listed and used by it.
  const command = parseWalletsCommand(["assign", tour.id, "--key", user.id]);
  expect(JSON.parse(await runWalletsCommand(command, config))).toEqual({ id: tour.id, owner: user.id });
  expect((await list(user.key)).body.map((r) => r.id)).toEqual([tour.id]);
  const accounts = await fetch(rt.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${user.key}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_accounts", params: [] }),
  }).then((r) => r.json() as Promise<{ result: string[] }>);
  expect(accounts.result.map((a) => a.toLowerCase())).toEqual([tour.address.toLowerCase()]);
  // The admin route does the same, and refuses a user key.
  const other = await rt.post(
    "/wallet",
    { type: "KEYSTORE_V3", password: "p", address_quantity: 1 },
    {
      authorization: `Bearer ${admin.key}`,
    },
  );
  const [second] = other.json as { id: string }[];
  const refused = await rt.post(
    `/wallet/${second!.id}/owner`,
    { key_id: user.id },
    { authorization: `Bearer ${user.key}` },
  );
  expect(refused.json).toMatchObject({ code: "ADMIN_REQUIRED" });
  const given = await rt.post(
    `/wallet/${second!.id}/owner`,
    { key_id: user.id },
    { authorization: `Bearer ${admin.key}` },
  );
  expect(given.json).toEqual({ id: second!.id, owner: user.id });
  expect((await list(user.key)).body.map((r) => r.id).sort()).toEqual([tour.id, second!.id].sort());
  expect(() => parseWalletsCommand(["assign", tour.id])).toThrow(/usage: chaingate wallets assign/);
});
