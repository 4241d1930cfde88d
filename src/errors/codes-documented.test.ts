import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "test-support" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The ways a stable code is written in src/: `code: "X"`, badRequest("X", ...), refusals and limits. */
const CODE = /(?:\bcode: |badRequest\(|limitExceeded\(|refuse\([^"]*)"([A-Z][A-Z0-9_]+)"/g;

it("every error code used in src/ is documented in docs/", () => {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => readFileSync(join(ROOT, "docs", name), "utf8"))
    .join("\n");
  const codes = new Set<string>();
  for (const file of sources(join(ROOT, "src"))) {
    for (const match of readFileSync(file, "utf8").matchAll(CODE)) codes.add(match[1]!);
  }
  // The scan finds the codes (a broken pattern would find none and pass vacuously).
  expect(codes.size).toBeGreaterThan(50);
  expect([...codes].filter((code) => !docs.includes(`\`${code}\``) && !docs.includes(code)).sort()).toEqual(
    [],
  );
});
