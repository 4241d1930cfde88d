/** Hardhat as a client of chaingate (accounts: "remote", hardhat-ethers@3 on Hardhat 2), in front of Hardhat's own node: the docs' example, run as written. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Hex, parseEther, toHex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { nodeCall, nodeReceipt } from "../src/test-support/chain-helpers.js";
import { DEV_ACCOUNT, EMITTER_INIT_CODE } from "../src/test-support/evm-fixtures.js";
import { type OtherNode, startHardhat } from "../src/test-support/other-nodes.js";
import { startTestRuntime, type TestRuntime } from "../src/test-support/test-runtime.js";

const ROOT = new URL("..", import.meta.url).pathname;
const require = createRequire(import.meta.url);
const CHAIN = 31_337;
const dir = mkdtempSync(join(tmpdir(), "chaingate-hardhat-client-"));
let node: OtherNode;
let rt: TestRuntime;

beforeAll(async () => {
  node = await startHardhat(join(dir, "node"), CHAIN);
  rt = await startTestRuntime({ env: { CHAINGATE_UPSTREAMS: node.url } });
}, 180_000);
afterAll(async () => {
  await rt?.close();
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a Hardhat script against chaingate with the project's hardhat; answers its standard output. */
function hardhatRun(config: string, script: string): Promise<string> {
  const cli = join(ROOT, "node_modules", "hardhat", "internal", "cli", "cli.js");
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, "run", script, "--network", "chaingate", "--config", config],
      {
        // Hardhat runs only where the config's project resolves this same hardhat package (HH12).
        cwd: ROOT,
        env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", DO_NOT_TRACK: "1" },
        timeout: 120_000,
      },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

it("getSigners lists the custody addresses; a send and a deploy from custody are mined (docs/signer.md, Hardhat)", async () => {
  const made = await rt.post("/wallet", { type: "KEYSTORE_V3", password: "hardhat-pw", address_quantity: 1 });
  const [record] = made.json as { address: Hex }[];
  // Funded from Hardhat's own dev account, then unlocked for the session.
  const funding = await nodeCall(node.url, "eth_sendTransaction", [
    { from: DEV_ACCOUNT, to: record!.address, value: toHex(parseEther("10")) },
  ]);
  await nodeReceipt(node.url, funding);
  const unlocked = await rt.post("/", {
    jsonrpc: "2.0",
    id: 1,
    method: "personal_unlockAccount",
    params: [record!.address, "hardhat-pw", 600],
  });
  expect((unlocked.json as { result: boolean }).result).toBe(true);

  const config = join(dir, "hardhat.config.cjs");
  writeFileSync(
    config,
    // In a user's project these are plain require("@nomicfoundation/hardhat-ethers") and require("hardhat").
    `require(${JSON.stringify(require.resolve("@nomicfoundation/hardhat-ethers"))});
module.exports = {
  networks: { chaingate: { url: "${rt.url}", accounts: "remote", chainId: ${CHAIN} } },
};
`,
  );
  const script = join(dir, "deploy.cjs");
  writeFileSync(
    script,
    `const hre = require(${JSON.stringify(require.resolve("hardhat"))});
async function main() {
  const [signer] = await hre.ethers.getSigners();
  const sent = await signer.sendTransaction({ to: signer.address, value: 1n });
  await sent.wait();
  const factory = new hre.ethers.ContractFactory([], "${EMITTER_INIT_CODE}", signer);
  const contract = await factory.deploy();
  await contract.waitForDeployment();
  console.log(JSON.stringify({ signer: signer.address, sent: sent.hash, deployed: await contract.getAddress() }));
}
main().catch((error) => { console.error(error); process.exitCode = 1; });
`,
  );
  const out = JSON.parse((await hardhatRun(config, script)).trim().split("\n").at(-1)!) as {
    signer: string;
    sent: string;
    deployed: string;
  };
  expect(out.signer.toLowerCase()).toBe(record!.address.toLowerCase());
  expect((await nodeReceipt(node.url, out.sent)).status).toBe("0x1");
  expect(await nodeCall(node.url, "eth_getCode", [out.deployed, "latest"])).not.toBe("0x");
}, 180_000);
