/** A JSON-RPC proxy in front of a node for tests: counts what it forwards, and lets a test answer or hold chosen calls. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * Sees each call before it is forwarded; returns true when it dealt with `response` itself
 * (answered it, or holds it open to cut a caller off mid-request). The calls of a JSON-RPC batch
 * are shown one by one: one taken takes the whole request, so with batches only hold or drop it.
 */
export type Intercept = (
  method: string | undefined,
  id: unknown,
  response: ServerResponse,
  /** The call itself (with its params), to forward or read. */
  call: { method?: string; id?: unknown; params?: unknown[] },
) => boolean;

export interface RpcProxy {
  url: string;
  /** Calls seen (forwarded or intercepted), by method, since the last reset. */
  counts: Map<string, number>;
  /** HTTP requests seen since the last reset (a JSON-RPC batch is one). */
  readonly requests: number;
  reset(): void;
  close(): Promise<void>;
}

/**
 * Sees each forwarded single call's answer and may change it (a node that lies): returns the
 * answer to send. Batches pass through unchanged unless the proxy is asked to rewrite them too.
 */
export type Rewrite = (
  call: { method: string; params: unknown[] },
  answer: { result?: unknown; error?: unknown },
) => { result?: unknown; error?: unknown } | Promise<{ result?: unknown; error?: unknown }>;

export async function startRpcProxy(
  target: string,
  intercept?: Intercept,
  rewrite?: Rewrite,
  /** `batches`: each call of a batch is rewritten too (matched to its answer by id). */
  options: { batches?: boolean } = {},
): Promise<RpcProxy> {
  const counts = new Map<string, number>();
  let requests = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      requests++;
      const parsed = JSON.parse(body) as { method?: string; id?: unknown } | { method?: string }[];
      for (const call of [parsed].flat())
        if (call.method) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
      const calls = [parsed].flat() as { method?: string; id?: unknown; params?: unknown[] }[];
      if (intercept && calls.some((call) => intercept(call.method, call.id, response, call))) return;
      fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then(async (answer) => {
          let text = await answer.text();
          if (rewrite && options.batches && Array.isArray(parsed))
            text = await rewriteBatch(rewrite, calls, text);
          if (rewrite && !Array.isArray(parsed) && parsed.method) {
            const original = JSON.parse(text) as { result?: unknown; error?: unknown };
            const call = parsed as { method: string; params?: unknown[] };
            const changed = await rewrite({ method: call.method, params: call.params ?? [] }, original);
            text = JSON.stringify({ ...original, ...changed });
          }
          response.writeHead(answer.status, { "content-type": "application/json" });
          response.end(text);
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    counts,
    get requests() {
      return requests;
    },
    reset: () => {
      counts.clear();
      requests = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Each answer of a batch through `rewrite`, matched to its call by id (a node may answer out of order). */
async function rewriteBatch(
  rewrite: Rewrite,
  calls: { method?: string; id?: unknown; params?: unknown[] }[],
  text: string,
): Promise<string> {
  const answers = JSON.parse(text) as { id?: unknown; result?: unknown; error?: unknown }[];
  if (!Array.isArray(answers)) return text;
  const changed = await Promise.all(
    answers.map(async (original) => {
      const call = calls.find((c) => c.id === original.id);
      if (call?.method === undefined) return original;
      return {
        ...original,
        ...(await rewrite({ method: call.method, params: call.params ?? [] }, original)),
      };
    }),
  );
  return JSON.stringify(changed);
}
