/** The request a node receives for one call is the JSON-RPC envelope of its method and parameters, whether the parameters come as values or as their text (decision 198). */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { HttpUpstream } from "./http-upstream.js";

/** A node that answers every call with `true` and keeps the bodies it was sent. */
let server: Server;
const bodies: string[] = [];
let upstream: HttpUpstream;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      const { id } = JSON.parse(body) as { id: unknown };
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ jsonrpc: "2.0", id, result: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream = new HttpUpstream(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    10_000,
    upstreamTraitsOf,
  );
});
afterAll(async () => {
  await upstream?.close();
  await new Promise((resolve) => server?.close(resolve));
});

it("sends the envelope of any method and parameters, from the values or from their text alike", async () => {
  await fc.assert(
    fc.asyncProperty(
      // Methods a client may name (quotes, escapes and non-ASCII included); parameters of any JSON.
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.array(fc.jsonValue(), { maxLength: 5 }),
      fc.boolean(),
      async (method, params, asText) => {
        bodies.length = 0;
        const paramsText = asText ? JSON.stringify(params) : undefined;
        expect(await upstream.call({ method, params, paramsText })).toBe(true);
        expect(bodies).toHaveLength(1);
        const sent = JSON.parse(bodies[0]!) as Record<string, unknown>;
        expect(sent).toEqual({
          jsonrpc: "2.0",
          id: sent.id,
          method,
          params: JSON.parse(JSON.stringify(params)),
        });
        expect(Number.isSafeInteger(sent.id)).toBe(true);
      },
    ),
    { numRuns: 200 },
  );
});
