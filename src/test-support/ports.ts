/** Loopback ports for tests that bind a port again later: chosen below the kernel's ephemeral range, where port 0 never lands. */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port the kernel hands out for port 0 (Linux's setting; its default elsewhere). */
function ephemeralLow(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  } catch {
    return 32768;
  }
}

/**
 * A loopback port nothing listens on right now, at random below the ephemeral range: a node a test
 * starts later at this address, or a server it closes and opens again, finds it still free, since
 * the other tests' nodes and servers (port 0) are given ports from the range above.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  const span = Math.min(10_000, low - 1025);
  for (let attempt = 0; ; attempt++) {
    const port = low - 1 - Math.floor(Math.random() * span);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (bound) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
    if (attempt >= 50) throw new Error("no free loopback port below the ephemeral range");
  }
}
