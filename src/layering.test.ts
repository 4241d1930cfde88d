import { readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { expect, it } from "vitest";
import { sourceFiles } from "./test-support/source-files.js";

/**
 * The folders of src/, lowest first: a folder may import from folders before it, never after it.
 * This list is the one place the order is written; a new folder must be placed in it.
 * (test-support/ and tests are outside the layers: they may import anything.)
 */
const LAYERS = [
  "collections",
  "errors",
  "config",
  "logging",
  "lifecycle",
  "tracing",
  "store",
  "keys",
  "upstream",
  "devnet",
  "filters",
  "rpc",
  "wallets",
  "operations",
  "audit",
  "webhooks",
  "policies",
  "idempotency",
  "tx",
  "contracts",
  "members",
  "tokens",
  "transport",
  "custody",
  "auth",
  "metrics",
  "http",
  // src/app.ts, runtime.ts and main.ts: the composition root, above everything.
  ".",
] as const;

const SRC = new URL(".", import.meta.url).pathname;

const folderOf = (file: string): string => {
  const parts = relative(SRC, file).split("/");
  return parts.length > 1 ? parts[0]! : ".";
};

it("no folder imports from a folder above it (the layer order is in LAYERS)", () => {
  const uphill: string[] = [];
  const unplaced = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    const rank = LAYERS.indexOf(from as (typeof LAYERS)[number]);
    if (rank < 0) unplaced.add(from);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      const to = folderOf(normalize(join(dirname(file), match[1]!)));
      if (to === from) continue;
      const target = LAYERS.indexOf(to as (typeof LAYERS)[number]);
      if (target < 0) unplaced.add(to);
      else if (target > rank) uphill.push(`${relative(SRC, file)} imports ${match[1]} (${from} -> ${to})`);
    }
  }
  expect([...unplaced], "folders missing from LAYERS").toEqual([]);
  expect(uphill).toEqual([]);
});

it("the check sees an uphill import when there is one", () => {
  // Guards the guard: a store file importing http must be caught by the same reading.
  const sample = 'import { x } from "../http/app.js";';
  const [match] = [...sample.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)];
  const to = folderOf(normalize(join(join(SRC, "store"), match![1]!)));
  expect(LAYERS.indexOf(to as (typeof LAYERS)[number])).toBeGreaterThan(LAYERS.indexOf("store"));
});

/** Each source file's imports of other source files (type-only imports too: a cycle of types is still a knot). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)]
      .map((match) => normalize(join(dirname(file), match[1]!.replace(/\.js$/, ".ts"))))
      .filter((target) => known.has(target));
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected groups of more than one file (Tarjan): each is a cycle of imports. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) cycles.push(group);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

it("no cycle between files anywhere in src/ (within a folder too)", () => {
  const graph = importGraph();
  expect(graph.size).toBeGreaterThan(200);
  expect(importCycles(graph).map((group) => group.map((f) => relative(SRC, f)).sort())).toEqual([]);
});

it("the cycle check finds a cycle when there is one", () => {
  const graph = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a"]],
    ["d", ["a"]],
  ]);
  expect(importCycles(graph).map((g) => g.sort())).toEqual([["a", "b", "c"]]);
});
