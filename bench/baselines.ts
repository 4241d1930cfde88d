/** The baselines the benches measure chaingate against: Node programs that do the least a server in its place must do (run with `node --input-type=module -e`). */

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

/**
 * The baseline for `POST /transaction`: the least a Node server that answers a transfer with its
 * hash must do, keeping nothing (no record, no ledger, no durability): read the body, encode the
 * transfer, hash and sign it natively (the packages chaingate signs with), send the raw bytes with
 * undici, answer the node's hash. Its key and the node's URL are its arguments; nonces count from 0.
 */
export const SIGNING_RELAY = `
  import { createServer } from "node:http";
  import { Pool } from "undici";
  import secp256k1 from "secp256k1";
  import createKeccakHash from "keccak";
  import { serializeTransaction, hexToBytes, bytesToHex } from "viem";
  const pool = new Pool(new URL(process.argv[1]).origin, { connections: 64, pipelining: 1 });
  const key = hexToBytes(process.argv[2]);
  let nonce = 0;
  createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c)).on("end", async () => {
      try {
        const { transaction } = JSON.parse(Buffer.concat(chunks).toString());
        const tx = { chainId: 1001, type: "eip1559", nonce: nonce++, to: transaction.to,
          value: BigInt(transaction.value), gas: 21000n, maxFeePerGas: 50000000000n, maxPriorityFeePerGas: 1000000000n };
        const hash = createKeccakHash("keccak256").update(Buffer.from(serializeTransaction(tx).slice(2), "hex")).digest();
        const { signature, recid } = secp256k1.ecdsaSign(hash, key);
        const raw = serializeTransaction(tx, { r: bytesToHex(signature.subarray(0, 32)),
          s: bytesToHex(signature.subarray(32)), yParity: recid });
        const answer = await pool.request({ path: "/", method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: [raw] }) });
        const sent = JSON.parse(await answer.body.text());
        if (typeof sent.result !== "string") throw new Error(JSON.stringify(sent.error));
        const body = JSON.stringify({ tx_hash: sent.result });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      } catch (error) { res.writeHead(502).end(String(error)); }
    });
  }).listen(0, "127.0.0.1", function () { console.log("http://127.0.0.1:" + this.address().port); });
`;
