import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keccak256, toBytes } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, expect, it } from "vitest";
import { startTestRuntime } from "../test-support/test-runtime.js";

const root = mkdtempSync(join(tmpdir(), "chaingate-perms-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (path: string) => statSync(path).mode & 0o777;

it("a new data directory is 0700 and the store files holding the keystores are 0600", async () => {
  const dataDir = join(root, "fresh", "data");
  const rt = await startTestRuntime({ dataDir });
  try {
    await rt.post("/wallet", { type: "KEYSTORE_V3", password: "perm-test", address_quantity: 1 });
    expect(mode(dataDir)).toBe(0o700);
    // The devnet operator's key is made at random and kept beside the store, readable by no one else.
    const keyFile = join(dataDir, "devnet", "operator.key");
    expect(mode(keyFile)).toBe(0o600);
    const operatorKey = readFileSync(keyFile, "utf8").trim() as `0x${string}`;
    expect(operatorKey).not.toBe(keccak256(toBytes("chaingate devnet operator")));
    expect(rt.system?.operator.address).toBe(privateKeyToAccount(operatorKey).address);
    const db = join(dataDir, "chaingate.sqlite");
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      expect(existsSync(file), file).toBe(true);
      expect(mode(file), file).toBe(0o600);
    }
  } finally {
    await rt.close();
  }
});

it("an existing data directory others can read is reported at start, and its database narrowed to 0600", async () => {
  const dataDir = join(root, "loose");
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o755);
  const lines: string[] = [];
  const rt = await startTestRuntime({ dataDir, logLines: lines });
  try {
    expect(lines.some((l) => l.includes("chmod 700") && l.includes('"mode":"755"'))).toBe(true);
    expect(mode(join(dataDir, "chaingate.sqlite"))).toBe(0o600);
  } finally {
    await rt.close();
  }
});
