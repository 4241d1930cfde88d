/** The server under Fastify counts every request from arrival until its response closes, answered or abandoned. */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyServerOptions } from "fastify";
import { Client } from "undici";
import { afterEach, expect, it } from "vitest";
import { OpenRequests, serverWithFastPaths } from "./fast-path-server.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

it("a request counts from arrival until its response closes, whether answered or abandoned by the client", async () => {
  const open = new OpenRequests();
  const held: ServerResponse[] = [];
  const handler = (_request: IncomingMessage, response: ServerResponse) => {
    held.push(response);
  };
  server = serverWithFastPaths(() => undefined, open)(handler as never, {} as FastifyServerOptions) as Server;
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const answered = new Client(`http://127.0.0.1:${port}`);
  const abandoned = new Client(`http://127.0.0.1:${port}`);
  try {
    const first = answered.request({ method: "POST", path: "/", body: "{}" });
    const controller = new AbortController();
    const second = abandoned.request({ method: "POST", path: "/", body: "{}", signal: controller.signal });
    await expect.poll(() => open.count, { timeout: 10_000, interval: 10 }).toBe(2);
    held[0]!.end("done");
    expect(await (await first).body.text()).toBe("done");
    await expect.poll(() => open.count, { timeout: 10_000, interval: 10 }).toBe(1);
    // The client goes away without an answer: its response closes, and it no longer counts.
    controller.abort();
    await expect(second).rejects.toThrow();
    await abandoned.destroy();
    await expect.poll(() => open.count, { timeout: 10_000, interval: 10 }).toBe(0);
  } finally {
    await answered.close();
    await abandoned.destroy();
  }
});
