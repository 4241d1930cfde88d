import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ARTIFACTS_FILE, compileContracts } from "./compile-contracts.js";

it("the committed artifacts are exactly what solc makes of contracts/ (run `npm run contracts` after a change)", () => {
  expect(compileContracts()).toBe(readFileSync(ARTIFACTS_FILE, "utf8"));
}, 120_000);

/** Opcodes newer than Paris: PUSH0 (Shanghai), TLOAD, TSTORE, MCOPY, BLOBHASH, BLOBBASEFEE (Cancun). */
const NEWER_THAN_PARIS = new Map([
  [0x5f, "PUSH0"],
  [0x5c, "TLOAD"],
  [0x5d, "TSTORE"],
  [0x5e, "MCOPY"],
  [0x49, "BLOBHASH"],
  [0x4a, "BLOBBASEFEE"],
]);

/** The opcodes of code (walking over PUSH data), up to the first INVALID (where metadata or nested code begins). */
function opcodes(code: string): number[] {
  const ops: number[] = [];
  for (let i = 2; i < code.length; ) {
    const op = Number.parseInt(code.slice(i, i + 2), 16);
    if (op === 0xfe) break;
    ops.push(op);
    i += 2 + (op >= 0x60 && op <= 0x7f ? (op - 0x5f) * 2 : 0);
  }
  return ops;
}

it("the shipped bytecode runs on a Paris EVM: no Shanghai or Cancun opcode (Ganache, consortium chains)", async () => {
  const artifacts = await import("./artifacts.generated.js");
  for (const [name, artifact] of Object.entries(artifacts)) {
    const newer = opcodes(artifact.bytecode).flatMap((op) => NEWER_THAN_PARIS.get(op) ?? []);
    expect(newer, name).toEqual([]);
  }
  // The walk sees what it looks for.
  expect(opcodes("0x605f5f5e").flatMap((op) => NEWER_THAN_PARIS.get(op) ?? [])).toEqual(["PUSH0", "MCOPY"]);
});
