/** The shipped alert rules and dashboard: promtool checks and unit-tests the rules against recorded series, and every series they name is one /metrics serves. */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { suiteRuntime } from "../test-support/test-runtime.js";

const DEPLOY = new URL("../../deploy/", import.meta.url).pathname;
const RULES = `${DEPLOY}prometheus/alerts.yml`;
const RULE_TESTS = `${DEPLOY}prometheus/alerts.test.yml`;
const DASHBOARD = `${DEPLOY}grafana/chaingate.json`;
const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((p) => existsSync(p));

if (PROMTOOL === undefined)
  process.stdout.write(
    "\n[chaingate tests] *** no promtool (Debian's prometheus): SKIPPING the alert rules' promtool tests (.ci/run installs it). ***\n",
  );

const promtool = (...args: string[]) =>
  execFileSync(PROMTOOL!, args, { cwd: `${DEPLOY}prometheus`, encoding: "utf8", stdio: "pipe" });

it.skipIf(PROMTOOL === undefined)(
  "promtool: the rules are valid and fire as their tests expect on recorded series",
  () => {
    expect(promtool("check", "rules", RULES)).toMatch(/SUCCESS: 8 rules found/);
    expect(promtool("test", "rules", RULE_TESTS)).toMatch(/SUCCESS/);
  },
);

/** The chaingate series an expression names (a histogram's _bucket/_sum/_count named as the histogram). */
function seriesIn(expr: string): string[] {
  return [...expr.matchAll(/\bchaingate_[a-z0-9_]+/g)].map((m) => m[0]);
}

describe("the series the rules and the dashboard name", () => {
  const rt = suiteRuntime();

  it("every series the alert rules and the dashboard query is one /metrics serves", async () => {
    const text = await (await fetch(`${rt.url}/metrics`)).text();
    const served = new Set<string>();
    for (const line of text.split("\n")) {
      const typed = /^# TYPE (\S+) (\S+)/.exec(line);
      if (!typed) continue;
      served.add(typed[1]!);
      if (typed[2] === "histogram")
        for (const suffix of ["_bucket", "_sum", "_count"]) served.add(`${typed[1]}${suffix}`);
    }
    const rules = readFileSync(RULES, "utf8")
      .split("\n")
      .filter((line) => line.trim().startsWith("expr:"));
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const queried = [
      ...rules.flatMap(seriesIn),
      ...dashboard.panels.flatMap((p) => p.targets.flatMap((t) => seriesIn(t.expr))),
    ];
    expect(rules).toHaveLength(8);
    expect(dashboard.panels.length).toBeGreaterThan(10);
    const missing = [...new Set(queried)].filter((name) => !served.has(name));
    expect(missing).toEqual([]);
    // The new series are there with values: the quorum per chain, and the codes counted once answered.
    expect(text).toMatch(/^chaingate_chain_upstreams_required\{chain="1001"\} 1$/m);
    expect(text).toMatch(/^chaingate_webhook_deliveries_pending \d+$/m);
    // Nothing read this runtime's log too slowly: no access-log line was dropped (decision 239).
    expect(text).toMatch(/^chaingate_access_log_dropped_lines 0$/m);
    await rt.post("/wallet/not-a-wallet/owner", {});
    await fetch(`${rt.url}/wallet/no-such-wallet`);
    const after = await (await fetch(`${rt.url}/metrics`)).text();
    expect(after).toMatch(/^chaingate_errors_answered_total\{code="[A-Z_]+"\} [1-9]\d*$/m);
  });
});
