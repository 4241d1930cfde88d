/** A JSON-RPC proxy in front of a node for tests: counts what it forwards, and lets a test answer or hold chosen calls. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * Sees each request before it is forwarded; returns true when it dealt with `response` itself
 * (answered it, or holds it open to cut a caller off mid-request).
 */
export type Intercept = (method: string | undefined, id: unknown, response: ServerResponse) => boolean;

export interface RpcProxy {
  url: string;
  /** Calls seen (forwarded or intercepted), by method, since the last reset. */
  counts: Map<string, number>;
  reset(): void;
  close(): Promise<void>;
}

export async function startRpcProxy(target: string, intercept?: Intercept): Promise<RpcProxy> {
  const counts = new Map<string, number>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      const parsed = JSON.parse(body) as { method?: string; id?: unknown } | { method?: string }[];
      for (const call of [parsed].flat())
        if (call.method) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
      if (!Array.isArray(parsed) && intercept?.(parsed.method, parsed.id, response)) return;
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
