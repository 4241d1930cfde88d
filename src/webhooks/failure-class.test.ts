import { createServer as createTcpServer } from "node:net";
import { Agent, request } from "undici";
import { afterAll, expect, it } from "vitest";
import { freePort } from "../test-support/ports.js";
import { failureClass, NOT_PUBLIC } from "./failure-class.js";

const agent = new Agent({ connectTimeout: 2_000 });
afterAll(() => agent.close());

/** The error undici gives for a request, as the webhook sender would meet it. */
async function errorOf(url: string, timeoutMs = 5_000): Promise<unknown> {
  try {
    await request(url, {
      method: "POST",
      body: "{}",
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

it("real network failures are told as their class, and the class never carries an address", async () => {
  const closed = await freePort();
  expect(failureClass(await errorOf(`http://127.0.0.1:${closed}/hook`))).toBe("connection refused");

  // A server that accepts and never answers: the sender's deadline.
  const silent = createTcpServer(() => {});
  // A server that closes every connection at once.
  const rude = createTcpServer((socket) => socket.destroy());
  await Promise.all([silent, rude].map((s) => new Promise<void>((r) => s.listen(0, "127.0.0.1", r))));
  const port = (s: typeof silent) => (s.address() as { port: number }).port;
  try {
    expect(failureClass(await errorOf(`http://127.0.0.1:${port(silent)}/hook`, 300))).toBe("timeout");
    expect(failureClass(await errorOf(`http://127.0.0.1:${port(rude)}/hook`))).toBe("connection reset");
    // TLS spoken to a server that closes: the handshake fails.
    expect(["tls", "connection reset"]).toContain(
      failureClass(await errorOf(`https://127.0.0.1:${port(rude)}/hook`)),
    );
  } finally {
    silent.close();
    rude.close();
  }
  expect(failureClass(Object.assign(new Error("x resolves to 10.0.0.1"), { code: NOT_PUBLIC }))).toBe(
    "address not public",
  );
  expect(
    failureClass(Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.invalid"), { code: "ENOTFOUND" })),
  ).toBe("dns");
  expect(
    failureClass(
      new Error("fetch failed", {
        cause: Object.assign(new Error("self-signed"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
      }),
    ),
  ).toBe("tls");
  expect(failureClass("a string")).toBe("network error");
});
