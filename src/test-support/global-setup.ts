/** Probes PostgreSQL once per test run and tells every test file whether that half of the suite runs. */
import { existsSync } from "node:fs";
import pg from "pg";
import type { TestProject } from "vitest/node";

export const DEFAULT_TEST_PG_URL = "postgres://postgres@127.0.0.1:5432/test";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string | null;
    chromiumPath: string | null;
  }
}

export const CHROMIUM_PATH = process.env.CHAINGATE_TEST_CHROMIUM ?? "/usr/bin/chromium";

export default async function setup(project: TestProject): Promise<void> {
  if (existsSync(CHROMIUM_PATH)) {
    project.provide("chromiumPath", CHROMIUM_PATH);
  } else {
    project.provide("chromiumPath", null);
    process.stdout.write(
      `\n[chaingate tests] *** no Chromium at ${CHROMIUM_PATH}: SKIPPING the console's browser tests ` +
        "(.ci/run installs Debian's chromium). ***\n",
    );
  }
  const url = process.env.CHAINGATE_TEST_DATABASE_URL ?? DEFAULT_TEST_PG_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("select 1");
    project.provide("postgresUrl", url);
    process.stdout.write(
      `\n[chaingate tests] PostgreSQL reachable at ${redact(url)}: running the PostgreSQL half.\n`,
    );
  } catch (error) {
    project.provide("postgresUrl", null);
    process.stdout.write(
      `\n[chaingate tests] *** PostgreSQL NOT reachable at ${redact(url)} (${(error as Error).message}): ` +
        "SKIPPING the PostgreSQL half of the suite. ***\n",
    );
  } finally {
    await client.end().catch(() => {});
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}
