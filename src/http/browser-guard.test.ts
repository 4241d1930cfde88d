import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { raw } from "../test-support/raw-request.js";
import { startTestRuntime, suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { checkHost, hostAllowed, hostName } from "./browser-guard.js";

function openSocket(url: string, origin?: string): Promise<"open" | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url.replace("http", "ws"), origin ? { origin } : {});
    ws.on("open", () => {
      ws.close();
      resolve("open");
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("error", () => {});
  });
}

it("reads the host name of any Host header; IP literals and localhost pass, other names only when listed", () => {
  expect(hostName("LocalHost:8545")).toBe("localhost");
  expect(hostName("[::1]:8545")).toBe("::1");
  expect(hostName("127.0.0.1")).toBe("127.0.0.1");
  const options = { listenHost: "127.0.0.1", vhosts: ["localhost", "*.corp.example"], allowedOrigins: [] };
  fc.assert(
    fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), (ip, port) =>
      hostAllowed(`${ip}:${port}`, options),
    ),
  );
  fc.assert(
    fc.property(fc.domain(), (domain) => {
      const allowed = hostAllowed(domain, options);
      const listed =
        domain === "localhost" || domain.endsWith(".localhost") || domain.endsWith(".corp.example");
      return allowed === listed;
    }),
  );
});

describe("without API keys, a web page cannot use chaingate", () => {
  let rt: TestRuntime;
  let port: string;
  beforeAll(async () => {
    rt = await startTestRuntime();
    port = new URL(rt.url).port;
  });
  afterAll(async () => rt?.close());

  it("a foreign Host (DNS rebinding) is refused; loopback names and addresses are served", async () => {
    const rebound = await raw(rt.url, "/wallet", "GET", { host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.text)).toMatchObject({ code: "HOST_NOT_ALLOWED" });
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, "localhost"]) {
      expect((await raw(rt.url, "/wallet", "GET", { host })).status, host).toBe(200);
    }
  });

  it("a cross-site text/plain or form POST cannot send a transaction; the same origin can call", async () => {
    // The victim: a custody address its owner has unlocked for signing, so a send would go through.
    const created = await rt.post("/wallet", {
      type: "KEYSTORE_V3",
      password: "victim-pw",
      address_quantity: 1,
    });
    const victim = (created.json as { address: string }[])[0]!.address;
    const unlocked = await rt.post("/", {
      jsonrpc: "2.0",
      id: 1,
      method: "personal_unlockAccount",
      params: [victim, "victim-pw", 600],
    });
    expect(unlocked.json).toMatchObject({ result: true });
    const nonceBefore = await result<string>(rt, "eth_getTransactionCount", [victim, "latest"]);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: victim, to: DEV_ACCOUNT_2, value: "0xde0b6b3a7640000" }],
    });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/json"]) {
      for (const path of ["/eth_sendTransaction", "/"]) {
        const answer = await raw(
          rt.url,
          path,
          "POST",
          { host: `127.0.0.1:${port}`, origin: "https://attacker.example", "content-type": type },
          body,
        );
        expect(answer.status, `${type} ${path}`).toBe(403);
        expect(JSON.parse(answer.text)).toMatchObject({ code: "ORIGIN_NOT_ALLOWED" });
      }
    }
    expect(await result<string>(rt, "eth_getTransactionCount", [victim, "latest"])).toBe(nonceBefore);
    expect(
      await rt.store.db.selectFrom("transactions").select("id").where("from_address", "=", victim).execute(),
    ).toHaveLength(0);
    const same = await raw(
      rt.url,
      "/eth_chainId",
      "POST",
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, "content-type": "application/json" },
      "{}",
    );
    expect(same.status).toBe(200);
  });

  it("a WebSocket from a foreign Origin is refused; the console's own origin and non-browser clients connect", async () => {
    expect(await openSocket(rt.url, "https://attacker.example")).toBe(403);
    expect(await openSocket(rt.url, rt.url)).toBe("open");
    expect(await openSocket(rt.url)).toBe("open");
  });

  it("the console and the docs cannot be framed by another site", async () => {
    for (const path of ["/console/", "/docs/"]) {
      const page = await fetch(`${rt.url}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.headers.get("x-frame-options"), path).toBe("DENY");
      expect(page.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'");
      await page.text();
    }
  });
});

describe("listed virtual hosts and origins", () => {
  const rt = suiteRuntime({
    env: { CHAINGATE_VHOSTS: "chaingate.internal", CHAINGATE_ALLOWED_ORIGINS: "https://wallet.example" },
  });

  it("are served", async () => {
    const port = new URL(rt.url).port;
    expect((await raw(rt.url, "/eth_chainId", "POST", { host: `chaingate.internal:${port}` })).status).toBe(
      200,
    );
    expect(
      (
        await raw(rt.url, "/eth_chainId", "POST", {
          host: `127.0.0.1:${port}`,
          origin: "https://wallet.example",
        })
      ).status,
    ).toBe(200);
    expect(await openSocket(rt.url, "https://wallet.example")).toBe("open");
  });
});

it("answers a Host check as the browser guard does, whatever was checked before and for which guard (property)", () => {
  const guards = [
    { listenHost: "127.0.0.1", vhosts: [], allowedOrigins: [] },
    { listenHost: "gateway.internal", vhosts: ["*.example.org"], allowedOrigins: [] },
    { listenHost: "0.0.0.0", vhosts: ["*"], allowedOrigins: [] },
  ];
  const hosts = [
    "localhost:8545",
    "127.0.0.1",
    "gateway.internal:80",
    "api.example.org",
    "evil.com",
    "[::1]:8545",
    "",
  ];
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.nat(guards.length - 1), fc.option(fc.constantFrom(...hosts), { nil: undefined })),
        {
          minLength: 1,
          maxLength: 20,
        },
      ),
      (checks) => {
        for (const [g, host] of checks)
          expect(hostAllowed(host, guards[g]!)).toBe(checkHost(host, guards[g]!));
      },
    ),
    { numRuns: 500 },
  );
});
