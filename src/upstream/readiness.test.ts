import { pino } from "pino";
import { expect, it } from "vitest";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { freePort } from "../test-support/ports.js";
import { ChainRegistry } from "./chain-registry.js";
import { ReadinessMonitor } from "./readiness.js";
import { UpstreamPool } from "./upstream-pool.js";

it("a chain whose every upstream is down makes readiness false without a node call per probe", async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  // Verified at start, then gone: what a node that dies after start-up looks like.
  const pool = new UpstreamPool(1001, [dead], 1_000, upstreamTraitsOf, {
    verified: new Map([[dead, 1001]]),
  });
  const chains = new ChainRegistry([{ chainId: 1001, name: "home", pool }], 1001);
  const monitor = new ReadinessMonitor(chains, 1_000, pino({ level: "silent" }));
  expect(monitor.snapshot().chains[0]).toMatchObject({ reachable: true, healthy_upstreams: 1 });
  await expect(pool.pollHeads()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
  await monitor.check();
  const snapshot = monitor.snapshot();
  expect(snapshot).toMatchObject({ ready: false, synced: false });
  expect(snapshot.chains[0]).toMatchObject({ reachable: false, healthy_upstreams: 0, upstreams: 1 });
  // Snapshots read state only: a thousand of them ask the dead node nothing.
  const faults = pool.stats()[0]!.faults;
  for (let i = 0; i < 1000; i++) monitor.snapshot();
  expect(pool.stats()[0]!.faults).toBe(faults);
  await pool.close();
});
