/** Request ids made without a caller's: one prefix a process, never the same id twice, another process another prefix. */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { newRequestId } from "./request-id.js";

const SHAPE = /^([0-9a-f]{12})-([1-9]\d*)$/;

describe("newRequestId", () => {
  it("gives ids of one prefix and a rising counter, none repeated", () => {
    const ids = Array.from({ length: 10_000 }, () => newRequestId());
    expect(new Set(ids).size).toBe(ids.length);
    const parts = ids.map((id) => SHAPE.exec(id));
    expect(parts.every((p) => p !== null)).toBe(true);
    expect(new Set(parts.map((p) => p![1])).size).toBe(1);
    const counts = parts.map((p) => Number(p![2]));
    expect(counts.every((n, i) => i === 0 || n === counts[i - 1]! + 1)).toBe(true);
  });

  it("has another prefix in another process (instances and restarts do not share ids)", () => {
    const source = `import("${new URL("./request-id.ts", import.meta.url).pathname}").then((m) => console.log(m.newRequestId()))`;
    const other = () =>
      execFileSync(process.execPath, ["--import", "tsx", "-e", source], { encoding: "utf8" }).trim();
    const here = newRequestId();
    const [a, b] = [other(), other()];
    for (const id of [a, b]) expect(id).toMatch(SHAPE);
    const prefixes = new Set([here, a, b].map((id) => id.slice(0, 12)));
    expect(prefixes.size).toBe(3);
    // Each process counts from the start.
    expect(a.slice(13)).toBe("1");
  });
});
