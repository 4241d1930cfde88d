/** The SQL migration runner: statements split at `;`, `--` comments dropped, none lost or joined. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { statementsOf } from "./sql-migration.js";

describe("statementsOf", () => {
  it("splits at each semicolon and drops comment lines", () => {
    const text = `
-- why the table exists
create table t (
  a text not null, -- not a comment line: kept
  b bigint
);
create index t_a on t (a); drop index t_a;
`;
    expect(statementsOf(text)).toEqual([
      "create table t (\n  a text not null, -- not a comment line: kept\n  b bigint\n)",
      "create index t_a on t (a)",
      "drop index t_a",
    ]);
  });

  it("gives back every statement it was given, in order, however they are laid out", () => {
    const statement = fc.stringMatching(/^[a-z][a-z0-9_ (),]{0,30}[a-z0-9)]$/);
    const gap = fc.constantFrom(" ", "\n", "\n\n", "\n-- a reason\n", "\t");
    fc.assert(
      fc.property(fc.array(fc.tuple(statement, gap), { maxLength: 8 }), (parts) => {
        const text = parts.map(([s, g]) => `${g}${s};`).join("");
        expect(statementsOf(text)).toEqual(parts.map(([s]) => s.trim()));
      }),
    );
  });
});
