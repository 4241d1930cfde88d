/** ownNodes' clean-up: every runtime a file started is closed and leaves nothing in the temp folder, however many it started. */
import { existsSync } from "node:fs";
import { expect, it } from "vitest";
import { ownNodes } from "./own-nodes.js";

const own = ownNodes("own-nodes");

it("a second runtime does not take the first's place: the clean-up stops both and removes their folders", async () => {
  const node = await own.anvil("node");
  const env = { CHAINGATE_UPSTREAMS: node.url };
  const first = await own.runtime({ env });
  const second = await own.runtime({ env });
  expect(first.dataDir).not.toBe(second.dataDir);
  // The second closed by its test, as history-routing's last test does; the first left to the clean-up.
  await second.close();
  expect(existsSync(second.dataDir)).toBe(false);
  expect(existsSync(first.dataDir)).toBe(true);
  await own.closeAll();
  expect(existsSync(first.dataDir)).toBe(false);
  expect(existsSync(own.dir)).toBe(false);
  // Closed once: the file's own clean-up after this test, and a second close, find nothing left to do.
  await expect(first.close()).resolves.toBeUndefined();
  await expect(own.closeAll()).resolves.toBeUndefined();
});
