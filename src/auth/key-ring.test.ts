import { afterAll, expect, it } from "vitest";
import { openStore } from "../store/database.js";
import { describeEachStore, tempStore } from "../test-support/stores.js";
import { ApiKeyStore } from "./api-keys.js";
import { KeyRing } from "./key-ring.js";

describeEachStore("the key ring hears key changes through the store's bus", (target) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("a key created or revoked by another process is known (or refused) long before the ring's own refresh", async () => {
    const temp = await tempStore(target);
    cleanups.push(() => temp.drop());
    // Two stores on one database: two instances (on SQLite, one process: the bus is in process).
    const mine = await openStore(temp.location);
    cleanups.push(() => mine.close());
    const theirs = target === "postgres" ? await openStore(temp.location) : mine;
    if (theirs !== mine) cleanups.push(() => theirs.close());
    // The ring's own refresh is set to an hour: only the bus can tell it in time.
    const ring = new KeyRing(new ApiKeyStore(mine), Date.now, 3_600_000);
    await ring.start();
    cleanups.push(async () => ring.stop());
    const created = await new ApiKeyStore(theirs).create("user", "pushed");
    await expect
      .poll(() => ring.known(created.key)?.keyId, { timeout: 2_000, interval: 20 })
      .toBe(created.id);
    await new ApiKeyStore(theirs).revoke(created.id);
    await expect.poll(() => ring.known(created.key), { timeout: 2_000, interval: 20 }).toBeUndefined();
  });
});
