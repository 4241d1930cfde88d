/** Idle HTTP connections are closed by the sweep; connections handed to a WebSocket server are not. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import type { FastifyServerOptions } from "fastify";
import { afterEach, expect, it } from "vitest";
import { OpenRequests, serverWithFastPaths } from "./fast-path-server.js";
import { IdleConnections } from "./idle-connections.js";

let server: Server | undefined;
/** Client sockets, and the server's ends of upgraded connections (no longer the HTTP server's to close). */
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A raw client that sends `text` and notes everything it hears and whether the server closed it. */
function rawClient(
  port: number,
  text: string,
): { socket: Socket; heard: () => string; closed: () => boolean } {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  let heard = "";
  let closed = false;
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    heard += chunk;
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    closed = true;
  });
  socket.write(text);
  return { socket, heard: () => heard, closed: () => closed };
}

async function listening(s: Server): Promise<number> {
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return (s.address() as AddressInfo).port;
}

it("a connection on which nothing moves for the bound is closed; an upgraded one is left to its WebSocket server", async () => {
  // A request that is never answered (a handler that hangs): the connection goes quiet.
  server = createServer((_request: IncomingMessage, _response: ServerResponse) => {});
  const upgraded: Socket[] = [];
  server.on("upgrade", (_request: IncomingMessage, socket: Socket) => {
    upgraded.push(socket);
    sockets.push(socket);
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n");
  });
  const idle = new IdleConnections(server, 400);
  const port = await listening(server);
  const upgrade = rawClient(
    port,
    "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n",
  );
  await expect.poll(() => upgrade.heard(), { timeout: 20_000, interval: 20 }).toContain("101 Switching");
  const hanging = rawClient(port, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}");
  await expect.poll(() => hanging.closed(), { timeout: 20_000, interval: 20 }).toBe(true);
  // Eight more sweeps (twice the bound): a watched upgraded socket would have gone with the other.
  const after = idle.sweeps;
  await expect.poll(() => idle.sweeps, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(after + 8);
  expect(upgrade.closed()).toBe(false);
  expect(upgraded[0]!.destroyed).toBe(false);
  expect(idle.size).toBe(0);
});

it("a connection that keeps moving is kept past the bound, and is closed once it stops", async () => {
  // The response is written a byte at a time until the test says stop: the connection moves.
  let writing = true;
  server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/plain" });
    const tick = setInterval(() => {
      if (writing) response.write("x");
    }, 10);
    response.on("close", () => clearInterval(tick));
  });
  const idle = new IdleConnections(server, 400);
  const port = await listening(server);
  const client = rawClient(port, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
  await expect.poll(() => client.heard(), { timeout: 20_000, interval: 20 }).toContain("200 OK");
  // Sixteen sweeps (four times the bound) while it moves: kept.
  const start = idle.sweeps;
  await expect.poll(() => idle.sweeps, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(start + 16);
  expect(client.closed()).toBe(false);
  writing = false;
  await expect.poll(() => client.closed(), { timeout: 20_000, interval: 20 }).toBe(true);
});

it("the server under Fastify closes idle connections at its connection timeout", async () => {
  const handler = (_request: IncomingMessage, _response: ServerResponse) => {};
  server = serverWithFastPaths(() => undefined, new OpenRequests())(
    handler as never,
    {
      connectionTimeout: 300,
    } as FastifyServerOptions,
  ) as Server;
  const port = await listening(server);
  const hanging = rawClient(port, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}");
  await expect.poll(() => hanging.closed(), { timeout: 20_000, interval: 20 }).toBe(true);
  // No idle timer on the socket itself: the sweep closed it.
  expect(server.timeout).toBe(0);
});
