/** No function in src/ is longer than 80 lines (the migrations are SQL text now, and need no exemption). */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";
import { sourceFiles } from "./test-support/source-files.js";

const SRC = new URL(".", import.meta.url).pathname;
const MAX_LINES = 80;

/** Every function, method, constructor, accessor and arrow function of `file` with its length in lines. */
function functionsOf(file: string): { name: string; line: number; lines: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: { name: string; line: number; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as { name?: ts.Node }).name;
      const name =
        named?.getText() ??
        (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent)
          ? node.parent.name.getText()
          : ts.isConstructorDeclaration(node)
            ? "constructor"
            : "(anonymous)");
      found.push({ name, line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it(`no function in src/ is longer than ${MAX_LINES} lines`, () => {
  const files = sourceFiles(SRC, { skipTestSupport: false });
  const functions = files.flatMap((file) =>
    functionsOf(file).map((f) => ({ ...f, where: `${relative(SRC, file)}:${f.line}` })),
  );
  const long = functions
    .filter((f) => f.lines > MAX_LINES)
    .map((f) => `${f.where} ${f.name} (${f.lines} lines)`);
  expect(long).toEqual([]);
  // The count is real: the walk sees the source's functions, and their lengths (some near the limit).
  expect(files.length).toBeGreaterThan(300);
  expect(functions.length).toBeGreaterThan(2000);
  expect(functions.some((f) => f.lines > MAX_LINES / 2)).toBe(true);
});
