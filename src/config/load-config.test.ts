import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, helpText, loadConfig } from "./load-config.js";
import { OPTIONS, shownDefault } from "./options.js";

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

/** A directory for this file's config files, removed when its tests end. */
const dirs: string[] = [];
function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "chaingate-config-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `config` written as JSON to c.json in a folder of its own: its path. */
function configFile(config: unknown): string {
  const file = join(configDir(), "c.json");
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe("configuration", () => {
  it("has the documented defaults and runs the embedded devnet without upstreams", () => {
    const config = loadConfig({ env: {}, argv: [] });
    expect(config).toMatchObject({
      port: 8545,
      host: "127.0.0.1",
      dataDir: "./.chaingate",
      databaseUrl: undefined,
      chains: undefined,
      homeChainId: 1001,
      filterIdleMs: 300_000,
      kdf: "standard",
    });
    expect(config.devnet.chainIds).toEqual([1001, 1002]);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.devnet)).toBe(true);
  });

  it("takes flags over the environment over the file", () => {
    const file = configFile({ port: 1111, host: "0.0.0.0", logLevel: "debug" });
    const config = loadConfig({
      env: { CHAINGATE_CONFIG: file, PORT: "2222", HOST: "::1" },
      argv: ["--port", "3333"],
    });
    expect(config.port).toBe(3333);
    expect(config.host).toBe("::1");
    expect(config.logLevel).toBe("debug");
    expect(loadConfig({ env: {}, argv: ["--port=4444"] }).port).toBe(4444);
  });

  it("fronts real nodes from CHAINGATE_UPSTREAMS", () => {
    const config = loadConfig({ env: { CHAINGATE_UPSTREAMS: "http://a:8545, https://b/rpc" } });
    expect(config.chains).toEqual([{ upstreams: [{ url: "http://a:8545" }, { url: "https://b/rpc" }] }]);
  });

  it("reads several chains with several upstreams from a config file", () => {
    const file = configFile({
      homeChainId: 10,
      chains: [
        { chainId: 1, upstreams: ["http://a", { url: "http://b", ws: "ws://b" }] },
        { chainId: 10, name: "op", upstreams: [{ url: "https://c" }] },
      ],
    });
    const config = loadConfig({ env: {}, argv: ["--config", file] });
    expect(config.homeChainId).toBe(10);
    expect(config.chains?.[0]?.upstreams).toEqual([{ url: "http://a" }, { url: "http://b", ws: "ws://b" }]);
  });

  it("names every bad field at once", () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          PORT: "abc",
          DATABASE_URL: "mysql://x",
          CHAINGATE_UPSTREAMS: "ftp://node",
          LOG_LEVEL: "loud",
          CHAINGATE_KDF: "none",
        },
        argv: ["--batch-limit", "0", "--bogus=1"],
      }),
    );
    expect(problems.join("\n")).toMatch(/PORT: must be an integer/);
    expect(problems.join("\n")).toMatch(/DATABASE_URL: "mysql:\/\/x" must use postgres or postgresql/);
    expect(problems.join("\n")).toMatch(/CHAINGATE_UPSTREAMS: "ftp:\/\/node" must use http or https/);
    expect(problems.join("\n")).toMatch(/LOG_LEVEL: must be one of/);
    expect(problems.join("\n")).toMatch(/CHAINGATE_KDF/);
    expect(problems.join("\n")).toMatch(/--batch-limit: must be an integer from 1/);
    expect(problems.join("\n")).toMatch(/unknown argument "--bogus=1"/);
    expect(problems).toHaveLength(7);
  });

  it("takes a chain's hedge setting (false, a fixed delay, or the observed p90) and names a bad one", () => {
    const file = configFile({
      chains: [
        { chainId: 1, upstreams: ["http://a", "http://b"], hedge: { afterMs: 150 } },
        { chainId: 2, upstreams: ["http://c", "http://d"], hedge: false },
        { chainId: 3, upstreams: ["http://e", "http://f"], hedge: {} },
      ],
    });
    const config = loadConfig({ env: {}, argv: ["--config", file] });
    expect(config.chains?.map((c) => c.hedge)).toEqual([{ afterMs: 150 }, false, {}]);
    writeFileSync(
      file,
      JSON.stringify({
        chains: [
          { chainId: 1, upstreams: ["http://a"], hedge: { afterMs: 0 } },
          { chainId: 2, upstreams: ["http://b"], hedge: "yes" },
          { chainId: 3, upstreams: ["http://c"], hedge: { after: 5 } },
        ],
      }),
    );
    const problems = problemsOf(() => loadConfig({ env: {}, argv: ["--config", file] }));
    expect(problems.filter((p) => /\.hedge must be false or/.test(p))).toHaveLength(3);
  });

  it("rejects bad config files with the file's path and the field", () => {
    const file = configFile({ chains: [{ chainId: -1, upstreams: [] }], colour: "blue", homeChainId: 7 });
    const problems = problemsOf(() => loadConfig({ env: {}, argv: ["--config", file] })).join("\n");
    expect(problems).toMatch(/unknown key "colour"/);
    expect(problems).toMatch(/chains\[0\]\.chainId must be a positive integer/);
    expect(problems).toMatch(/chains\[0\]\.upstreams must be a non-empty array/);
    writeFileSync(file, "{not json");
    expect(problemsOf(() => loadConfig({ env: {}, argv: ["--config", file] })).join()).toMatch(
      /not valid JSON/,
    );
    expect(
      problemsOf(() =>
        loadConfig({ env: {}, argv: ["--config", join(dirname(file), "missing.json")] }),
      ).join(),
    ).toMatch(/cannot be read/);
  });

  it("never accepts an out-of-range or non-numeric port (property)", () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        const valid = /^\s*\d+\s*$/.test(raw) && Number(raw.trim()) <= 65535;
        if (raw === "") return true; // empty env values count as unset
        try {
          const config = loadConfig({ env: { PORT: raw } });
          return valid && config.port === Number(raw.trim());
        } catch (error) {
          return !valid && error instanceof ConfigError && error.problems[0]!.startsWith("PORT:");
        }
      }),
      // "-0" reads as the number -0, which a range check alone lets through (found by a run's seed).
      { numRuns: 500, examples: [["-0"], [" -00 "], ["-1"], ["65536"]] },
    );
  });

  it("lists every option in --help", () => {
    const help = helpText();
    for (const option of OPTIONS) {
      expect(help).toContain(option.flag);
      expect(help).toContain(option.env);
    }
  });

  it("rates are a count in the option's unit, or per s, min or h", () => {
    const config = loadConfig({
      env: {},
      argv: ["--rate-read", "5", "--rate-sign", "100/min", "--rate-wallets", "2/h", "--rate-trace", "7/min"],
    });
    expect(config.rateLimits).toEqual({
      read: { count: 5, perMs: 1000 },
      sign: { count: 100, perMs: 60_000 },
      wallet_create: { count: 2, perMs: 3_600_000 },
      trace: { count: 7, perMs: 60_000 },
    });
    expect(() => loadConfig({ env: { CHAINGATE_RATE_READ: "5/day" }, argv: [] })).toThrow(
      /CHAINGATE_RATE_READ.*per s, min or h/,
    );
  });

  it("--help fits an 80-column terminal", () => {
    const lines = helpText().split("\n");
    expect(lines.filter((line) => line.length > 80)).toEqual([]);
    // Every option row is there (the check above would pass on a help that wrapped nothing).
    expect(lines.filter((line) => line.startsWith("  --")).length).toBe(OPTIONS.length);
  });
});

it("the README's option table shows each option's env name and default as its row in the option table does", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const rows = [...readme.matchAll(/^\| `(--[a-z-]+)`\s*\| `([A-Z_]+)`\s*\| ([^|]*)\|/gm)];
  expect(rows.length).toBeGreaterThan(10);
  for (const [, flag, env, shown] of rows) {
    const option = OPTIONS.find((o) => o.flag === flag);
    expect(option, `${flag} is in the README but not an option`).toBeDefined();
    expect(option!.env, flag).toBe(env);
    expect(shown!.trim().replaceAll("`", ""), `${flag}'s default`).toBe(shownDefault(option!) ?? "");
  }
});

it("every option's default is on its row, and load gives it when nothing is set", () => {
  const config = loadConfig({ env: {}, argv: [] });
  expect(config.port).toBe(OPTIONS.find((o) => o.key === "port")!.default);
  expect(new Set(OPTIONS.map((o) => o.key)).size).toBe(OPTIONS.length);
  for (const option of OPTIONS) expect(option, option.key).toHaveProperty("default");
});
