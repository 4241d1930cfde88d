/** A round-robin load balancer for tests: each HTTP request, and each WebSocket, goes to the next backend in turn. */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import { connect, type Socket } from "node:net";

export interface Balancer {
  url: string;
  /** Requests sent to each backend, in the order the backends were given. */
  readonly served: number[];
  /** Backends taken out (a killed instance): skipped until put back. */
  down: Set<number>;
  close(): Promise<void>;
}

/**
 * A backend answer's headers less its hop-by-hop ones: its `Keep-Alive: timeout=72` (Fastify's
 * default) passed on told clients to keep an idle connection for 72 s, which this server closes
 * after its own 5: a client reusing one as it closes reads ECONNRESET, the likely cause of a
 * cluster test's fetch failing so on a loaded machine (not reproduced in 520 tries on a quiet
 * one). Hop-by-hop headers are not a proxy's to pass on; the client hears this server's own.
 */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept = { ...headers };
  delete kept.connection;
  delete kept["keep-alive"];
  return kept;
}

export async function startBalancer(backends: readonly string[]): Promise<Balancer> {
  const targets = backends.map((b) => new URL(b));
  const served = targets.map(() => 0);
  const down = new Set<number>();
  let next = 0;
  const pick = (): number => {
    for (let tried = 0; tried < targets.length; tried++) {
      const i = next++ % targets.length;
      if (!down.has(i)) return i;
    }
    return 0;
  };
  const sockets = new Set<Socket>();
  const server: Server = createServer((incoming, outgoing) => {
    const i = pick();
    served[i]!++;
    const target = targets[i]!;
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target.host },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(outgoing);
      },
    );
    forward.on("error", () => {
      if (!outgoing.headersSent) outgoing.writeHead(502).end();
      else outgoing.destroy();
    });
    incoming.pipe(forward);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // A WebSocket is one connection for its whole life: it is piped to one backend as bytes.
  server.on("upgrade", (incoming, socket, head) => {
    const i = pick();
    served[i]!++;
    const target = targets[i]!;
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`${incoming.method} ${incoming.url} HTTP/1.1`];
      for (let h = 0; h < incoming.rawHeaders.length; h += 2)
        lines.push(`${incoming.rawHeaders[h]}: ${incoming.rawHeaders[h + 1]}`);
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.once("close", () => {
      sockets.delete(upstream);
      socket.destroy();
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
    socket.once("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    served,
    down,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
