/** chaingate reads nodes for itself only through the typed reads: the pool is called directly only to pass a client's own call through. */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";

const SRC = new URL("..", import.meta.url).pathname;

/** Where a client's call is forwarded as it is (the client reads the answer), and the module that types the rest. */
const PASS_THROUGH = [
  "rpc/dispatcher.ts",
  // A devnet node's own accounts, and eth_fillTransaction for an address not in custody.
  "custody/signer-kit.ts",
  "custody/signer-handlers/eth-fill-transaction.ts",
  // A client's read asked of several upstreams (consensus=N): the client reads the agreed answer.
  "upstream/consensus-read.ts",
  "upstream/node-reads.ts",
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "test-support" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

it("no module outside node-reads calls the pool for an answer it reads (pool.call / callOn)", () => {
  const offenders = sources(SRC)
    .map((file) => ({ file: relative(SRC, file), text: readFileSync(file, "utf8") }))
    .filter(({ file, text }) => !PASS_THROUGH.includes(file) && /\.pool\s*\.\s*call(On)?\(/.test(text))
    .map(({ file }) => file);
  expect(offenders).toEqual([]);
  // The pass-through modules exist (the list is not stale).
  for (const file of PASS_THROUGH) expect(readFileSync(join(SRC, file), "utf8")).toMatch(/pool\.call/);
});
