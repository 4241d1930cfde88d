import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { expect, it } from "vitest";
import { native } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { freePort } from "../test-support/ports.js";

const own = ownNodes("partial");

interface NetworkUpstream {
  label: string;
  healthy: boolean;
  status: string;
  head: number | null;
  reported_chain_id: number | null;
  answered: number;
}

it("starts with one of two upstreams down, uses it once it answers, and never serves from one on another chain", async () => {
  const up = await own.anvil("up");
  // Another chain's node behind a URL configured for this chain (a misrouted load balancer).
  const wrong = await own.anvil("wrong", { chainId: 1003 });
  const downPort = await freePort();
  const downUrl = `http://127.0.0.1:${downPort}`;
  // The query stands for a hosted provider's project key: it must appear nowhere outside the process.
  const secretPath = "/?key=s3cr3t-project-key";
  const runtime = await own.runtime({
    env: {
      CHAINGATE_UPSTREAMS: `${up.url}${secretPath},${downUrl}${secretPath},${wrong.url}${secretPath}`,
      CHAINGATE_CACHE_MB: "0",
    },
  });
  const network = async () =>
    (
      (await (await fetch(`${runtime.url}/network`)).json()) as {
        chains: { chain_id: number; upstreams: NetworkUpstream[] }[];
      }
    ).chains[0]!;

  // Serving from the one that is up.
  expect((await native(runtime, "eth_chainId")).result).toBe("0x3e9");
  let upstreams = (await network()).upstreams;
  expect(upstreams.map((u) => u.status)).toEqual(["verified", "unverified", "quarantined"]);
  expect(upstreams[2]!.reported_chain_id).toBe(1003);
  expect(upstreams[2]!.healthy).toBe(false);
  const ready = await fetch(`${runtime.url}/readyz`);
  expect(ready.status).toBe(200);

  // Many reads: the quarantined node answers none of them.
  for (let i = 0; i < 30; i++) expect((await native(runtime, "eth_chainId")).result).toBe("0x3e9");
  expect(runtime.chains.home.pool.stats()[2]!.answered).toBe(0);

  // The missing node comes up on its address: verified on first contact, then healthy with a head.
  await own.anvil("late", { port: downPort });
  expect(
    await waitUntil(async () => {
      const u = (await network()).upstreams[1]!;
      return u.status === "verified" && u.healthy && u.head !== null;
    }, 30_000),
  ).toBe(true);
  // And it takes its turn at answering.
  const before = runtime.chains.home.pool.stats()[1]!.answered;
  for (let i = 0; i < 10; i++) await native(runtime, "eth_chainId");
  expect(runtime.chains.home.pool.stats()[1]!.answered).toBeGreaterThan(before);

  // The metrics say which upstream is quarantined; no URL path or key appears anywhere outside.
  const metricsText = await (await fetch(`${runtime.url}/metrics`)).text();
  const quarantined = parsePrometheusTextFormat(metricsText).find(
    (f) => f.name === "chaingate_upstream_quarantined",
  );
  expect(quarantined?.metrics.map((m) => Number(m.value))).toEqual([0, 0, 1]);
  upstreams = (await network()).upstreams;
  const outside = [
    metricsText,
    JSON.stringify(upstreams),
    await (await fetch(`${runtime.url}/readyz`)).text(),
  ].join("\n");
  expect(outside).not.toContain("s3cr3t");
  expect(outside).not.toContain("key=");
}, 90_000);
