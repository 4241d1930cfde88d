import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

const DECISIONS = new URL("../docs/decisions.md", import.meta.url);

it("docs/decisions.md: every number once, none skipped, each entry under a subsystem heading with a status", () => {
  const text = readFileSync(DECISIONS, "utf8");
  const entries = text.split(/\n(?=- \*\*\d+\. )/).slice(1);
  const numbers = entries.map((e) => Number(/^- \*\*(\d+)\./.exec(e)![1]));
  expect(numbers.length).toBeGreaterThan(100);
  expect([...numbers].sort((a, b) => a - b)).toEqual(numbers.map((_, i) => i + 1).sort((a, b) => a - b));
  const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  expect(headings.length).toBeGreaterThan(5);
  for (const entry of entries) {
    const n = /^- \*\*(\d+)\./.exec(entry)![1];
    expect(entry.split("\n## ")[0], `decision ${n}`).toMatch(
      /Status:\s+(in\s+force|amended\s+by\s+\d+|superseded\s+by\s+\d+|withdrawn)/,
    );
  }
  // Within each subsystem, oldest first.
  for (const section of text.split(/\n## /).slice(1)) {
    const inSection = [...section.matchAll(/^- \*\*(\d+)\. /gm)].map((m) => Number(m[1]));
    expect(inSection, section.split("\n")[0]).toEqual([...inSection].sort((a, b) => a - b));
  }
});
