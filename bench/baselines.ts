/** The baselines the read benches measure chaingate against: Node programs that do the least a server in its place must do (run with `node --input-type=module -e`). */

/** The baseline for forwarding: the least a Node process in front of a node must do (read the body, ask with undici, answer). */
export const FORWARDER = `
  import { createServer } from "node:http";
  import { Pool } from "undici";
  const pool = new Pool(new URL(process.argv[1]).origin, { connections: 64, pipelining: 1 });
  createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c)).on("end", async () => {
      try {
        const answer = await pool.request({ path: "/", method: "POST",
          headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) });
        const body = Buffer.from(await answer.body.arrayBuffer());
        res.writeHead(answer.statusCode, { "content-type": "application/json", "content-length": body.length });
        res.end(body);
      } catch { res.writeHead(502).end(); }
    });
  }).listen(0, "127.0.0.1", function () { console.log("http://127.0.0.1:" + this.address().port); });
`;

/** The Node ceiling: a Fastify handler that answers a constant, the very bytes chaingate answers for the cached call. */
export const CEILING = `
  import Fastify from "fastify";
  const answer = process.argv[1];
  const app = Fastify();
  app.post("/", async (_request, reply) => reply.type("application/json").send(answer));
  console.log(await app.listen({ port: 0, host: "127.0.0.1" }));
`;
