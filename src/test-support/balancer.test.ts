/** The test balancer: each request goes to the next backend, and clients hear its own connection terms, not a backend's. */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Balancer, startBalancer } from "./balancer.js";

let backends: Server[] = [];
let lb: Balancer;

beforeAll(async () => {
  backends = [0, 1].map((n) =>
    createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        // As chaingate (Fastify) answers: keep an idle connection for 72 s.
        response.writeHead(200, { "content-type": "application/json", "keep-alive": "timeout=72" });
        response.end(JSON.stringify({ backend: n }));
      });
    }),
  );
  for (const backend of backends)
    await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  lb = await startBalancer(backends.map((b) => `http://127.0.0.1:${(b.address() as { port: number }).port}`));
});

afterAll(async () => {
  await lb.close();
  for (const backend of backends) {
    backend.closeAllConnections();
    await new Promise((resolve) => backend.close(resolve));
  }
});

it("sends requests round-robin and answers with its own keep-alive timeout, not the backend's", async () => {
  const answers: unknown[] = [];
  for (let i = 0; i < 4; i++) {
    const response = await fetch(lb.url, { method: "POST", body: "{}" });
    // Node's own server default (5 s): a client told 72 s may reuse a connection as this server
    // closes it after 5, and read ECONNRESET.
    expect(response.headers.get("keep-alive")).toBe("timeout=5");
    answers.push(await response.json());
  }
  expect(answers).toEqual([{ backend: 0 }, { backend: 1 }, { backend: 0 }, { backend: 1 }]);
  expect(lb.served).toEqual([2, 2]);
});
