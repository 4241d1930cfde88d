import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { sourceFiles } from "../test-support/source-files.js";
import { ERROR_CODES, isErrorCode, STANDARD_POSITIVE_CODES } from "./codes.js";
import { renderErrorIndex, withErrorIndex } from "./error-index.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The ways a stable code is written in src/: `code: "X"`, badRequest("X", ...), refusals and limits. */
const CODE = /(?:\bcode: |badRequest\(|limitExceeded\(|refuse\([^"]*)"([A-Z][A-Z0-9_]+)"/g;

it("every error code written in src/ is in the catalogue", () => {
  const written = new Set<string>();
  for (const file of sourceFiles(join(ROOT, "src"))) {
    for (const match of readFileSync(file, "utf8").matchAll(CODE)) written.add(match[1]!);
  }
  // The scan finds the codes (a broken pattern would find none and pass vacuously).
  expect(written.size).toBeGreaterThan(60);
  expect([...written].filter((code) => !isErrorCode(code)).sort()).toEqual([]);
});

it("docs/api.md's error index is the catalogue's, row for row (npm run docs:errors rewrites it)", () => {
  const doc = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
  expect(withErrorIndex(doc)).toBe(doc);
  const index = renderErrorIndex();
  for (const code of Object.keys(ERROR_CODES)) expect(index).toContain(`| \`${code}\` `);
});

it("each entry is coherent: failover implies retry, statuses are HTTP errors, JSON-RPC codes are negative (unless a standard gives them)", () => {
  for (const [code, entry] of Object.entries(ERROR_CODES)) {
    const e: { status: number; rpc?: number; retry?: boolean; failover?: boolean; alsoStatus?: number } =
      entry;
    if (e.failover) expect(e.retry, code).toBe(true);
    expect(e.status, code).toBeGreaterThanOrEqual(400);
    expect(e.status, code).toBeLessThan(600);
    // Negative, but for the positive codes EIP-7966 and EIP-5792 define.
    if (e.rpc !== undefined && !STANDARD_POSITIVE_CODES.has(e.rpc)) expect(e.rpc, code).toBeLessThan(0);
    // A refusal a client is told to retry is a 429, a 503 or a 504 (or a 409 still in progress).
    if (e.retry) expect([409, 429, 503, 504], code).toContain(e.status);
  }
});
