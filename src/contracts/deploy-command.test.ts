import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../devnet/anvil-node.js";
import { DEV_PRIVATE_KEY } from "../test-support/evm-fixtures.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { op } from "../test-support/token-helpers.js";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "chaingate-deploy-"));
const nodes: AnvilNode[] = [];
const runtimes: TestRuntime[] = [];

afterAll(async () => {
  for (const rt of runtimes) await rt.close();
  for (const node of nodes) await node.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function code(url: string, address: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getCode", params: [address, "latest"] }),
  });
  return ((await response.json()) as { result: string }).result;
}

it("real networks: members and transports stay off until `chaingate contracts deploy` has run once", async () => {
  const logger = pino({ level: "silent" });
  const a = await startAnvil({ chainId: 7001, dir: join(dir, "a"), blockTime: 0, logger });
  const b = await startAnvil({ chainId: 7002, dir: join(dir, "b"), blockTime: 0, logger });
  nodes.push(a, b);
  const configFile = join(dir, "chaingate.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      homeChainId: 7001,
      chains: [
        { chainId: 7001, upstreams: [{ url: a.url }] },
        { chainId: 7002, upstreams: [{ url: b.url }] },
      ],
    }),
  );
  const env = { CHAINGATE_CONFIG: configFile, CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY };

  const before = await startTestRuntime({ env });
  runtimes.push(before);
  expect(before.system).toBeUndefined();
  const refused = await op(before, "register_new_member", { name: "A", chain_id: 7002, role: "ISSUER" });
  expect(refused.error?.data?.code).toBe("CONTRACTS_UNAVAILABLE");
  expect(refused.error?.message).toContain("chaingate contracts deploy");

  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", MAIN, "contracts", "deploy", "--config", configFile, "--data-dir", join(dir, "data")],
    { env: { ...process.env, CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY, LOG_LEVEL: "error" } },
  );
  const deployed = JSON.parse(stdout.trim().split("\n").at(-1)!) as { registry: string; endpoint: string };
  expect(await code(a.url, deployed.registry)).not.toBe("0x");
  expect(await code(a.url, deployed.endpoint)).not.toBe("0x");
  expect(await code(b.url, deployed.endpoint)).not.toBe("0x");
  // The registry lives on the home chain only.
  expect(await code(b.url, deployed.registry)).toBe("0x");

  const after = await startTestRuntime({ env });
  runtimes.push(after);
  expect(after.system).toMatchObject({ registry: deployed.registry, endpoint: deployed.endpoint });
  const member = await op(after, "register_new_member", { name: "Peer", chain_id: 7002, role: "ISSUER" });
  expect(member.result).toMatchObject({ id: 1, name: "Peer", chain_id: 7002, status: "ACTIVE" });

  const withoutKey = await startTestRuntime({ env: { CHAINGATE_CONFIG: configFile } });
  runtimes.push(withoutKey);
  const off = await op(withoutKey, "list_all_members", {});
  expect(off.error?.message).toContain("CHAINGATE_OPERATOR_KEY");
}, 120_000);
