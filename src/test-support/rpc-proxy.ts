/** A JSON-RPC proxy in front of a node that counts the methods it forwards (for tests of upstream cost). */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export interface CountingProxy {
  url: string;
  /** Calls forwarded, by method, since the last reset. */
  counts: Map<string, number>;
  reset(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const counts = new Map<string, number>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
      for (const call of [parsed].flat())
        if (call.method) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
      fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then(async (answer) => {
          response.writeHead(answer.status, { "content-type": "application/json" });
          response.end(await answer.text());
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    counts,
    reset: () => counts.clear(),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
