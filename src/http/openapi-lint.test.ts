import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const run = promisify(execFile);
const REDOCLY = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

let rt: TestRuntime;
let dir: string;
let file: string;
beforeAll(async () => {
  rt = await startTestRuntime();
  dir = mkdtempSync(join(tmpdir(), "chaingate-openapi-"));
  file = join(dir, "openapi.json");
  writeFileSync(file, await (await fetch(`${rt.url}/openapi.json`)).text());
});
afterAll(async () => {
  await rt?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

it("Redocly's recommended rules find no error and no warning in /openapi.json", async () => {
  // `lint` exits 1 when it finds errors; the JSON report on stdout is read either way.
  const { stdout } = await run(
    process.execPath,
    [REDOCLY, "lint", "--extends=recommended", "--format=json", file],
    {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
  const report = JSON.parse(stdout) as RedoclyReport;
  const found = report.problems.map(
    (p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`,
  );
  expect(found).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
}, 120_000);

it("swagger-parser validates /openapi.json against the OpenAPI 3.1 schema with no error", async () => {
  const api = (await SwaggerParser.validate(file)) as { openapi: string; paths: Record<string, unknown> };
  expect(api.openapi).toBe("3.1.0");
  expect(Object.keys(api.paths).length).toBeGreaterThan(70);
});

it("every guarded operation documents the key and rate refusals; every operation documents the browser guard", async () => {
  const doc = JSON.parse(await (await fetch(`${rt.url}/openapi.json`)).text()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const codes = Object.keys(op.responses);
      expect(codes, `${method} ${path}`).toContain("403");
      if (!["/healthz", "/readyz"].includes(path))
        expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(["401", "429"]));
    }
  }
});
