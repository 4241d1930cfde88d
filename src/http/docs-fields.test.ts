/** Every field the docs name as a path (`details.via`, `error.data.field`) is one chaingate answers: docs match the code. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The user's documents; decisions.md is the team's history and names internals (tables, columns). */
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md") && f !== "decisions.md")
    .map((f) => join("docs", f)),
];

/** Dotted names in prose that are not API fields, each with why. */
const NOT_FIELDS: Record<string, string> = {
  "provider.websocket.onmessage": "ethers' WebSocketProvider property, in a client example",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "test-support" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

let rt: TestRuntime;
/** Every property name in the OpenAPI document's schemas: what a client can be answered. */
const documented = new Set<string>();
beforeAll(async () => {
  rt = await startTestRuntime();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === "object" && value !== null) {
      const properties = (value as { properties?: Record<string, unknown> }).properties;
      if (properties) for (const name of Object.keys(properties)) documented.add(name);
      Object.values(value).forEach(walk);
    }
  };
  walk(await (await fetch(`${rt.url}/openapi.json`)).json());
});
afterAll(async () => rt?.close());

it("each field path in README.md and docs/ starts at a documented field and goes on through fields the code writes", () => {
  const sources = sourceFiles(join(ROOT, "src")).map((f) => readFileSync(f, "utf8"));
  // Keys the code writes into answers it builds (error data, transfer details): `name:` in object literals.
  const written = new Set(
    sources.flatMap((text) => [...text.matchAll(/\b([a-z][a-z0-9_]*)\??:/g)].map((m) => m[1]!)),
  );
  // Dotted names the code uses as values: webhook event types, audit operations (`transport.sent`).
  const literals = new Set(
    sources.flatMap((text) => [...text.matchAll(/"([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)"/g)].map((m) => m[1]!)),
  );
  expect(documented.size, "names read from /openapi.json").toBeGreaterThan(50);

  const unknown: string[] = [];
  let checked = 0;
  for (const file of DOCS) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const match of text.matchAll(/`([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+)(?::[^`]*)?`/g)) {
      const path = match[1]!;
      if (/\.(ts|js|mjs|md|json|sol|ya?ml|sqlite|html|css|lua|sh|txt|log)$/.test(path)) continue;
      if (literals.has(path) || path in NOT_FIELDS) continue;
      checked++;
      const [first, ...rest] = path.split(".");
      const known = documented.has(first!) && rest.every((name) => documented.has(name) || written.has(name));
      if (!known) unknown.push(`${file}: \`${path}\``);
    }
  }
  // The check reads real paths (a broken pattern would find none and pass).
  expect(checked).toBeGreaterThan(10);
  expect(unknown).toEqual([]);
});
