/** A node's answer read straight from undici's dispatch: whole and decoded once, capped, abortable, and failing with undici's own errors (decision 199). */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { errors, Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { readAnswer } from "./answer-reader.js";
import { CallAbort } from "./call-abort.js";

/** What the test server does with the next request, by its path. */
type Behaviour = (request: IncomingMessage, response: ServerResponse) => void;
const behaviours = new Map<string, Behaviour>();
let server: Server;
let pool: Pool;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => behaviours.get(request.url ?? "")?.(request, response));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
    connections: 4,
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
  });
});
afterAll(async () => {
  await pool?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const post = (path: string, maxBytes = 1 << 20, signal?: CallAbort) =>
  readAnswer(
    pool,
    { path, method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
    maxBytes,
    signal,
  );

/** Writes `bytes` in the pieces `cuts` makes of it, each in its own write after a turn of the loop. */
async function writeInPieces(response: ServerResponse, bytes: Buffer, cuts: number[]): Promise<void> {
  response.writeHead(200, { "content-type": "application/json" });
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b)) {
    if (cut <= at) continue;
    response.write(bytes.subarray(at, cut));
    at = cut;
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end(bytes.subarray(at));
}

describe("readAnswer", () => {
  it("reads any text whole, however its bytes are split, a character cut between two pieces included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 200 }),
        fc.array(fc.nat({ max: 800 }), { maxLength: 6 }),
        async (text, cuts) => {
          const bytes = Buffer.from(text, "utf8");
          behaviours.set("/pieces", (_request, response) => void writeInPieces(response, bytes, cuts));
          expect(await post("/pieces")).toEqual({
            status: 200,
            text,
            bytes,
            ascii: Buffer.from(text, "utf8").every((b) => b < 0x80),
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("says an answer is ASCII only when every byte is, invalid UTF-8 included (decoded as UTF-8 decodes it)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.array(fc.nat({ max: 300 }), { maxLength: 4 }),
        async (array, cuts) => {
          const bytes = Buffer.from(array);
          behaviours.set("/bytes", (_request, response) => void writeInPieces(response, bytes, cuts));
          const answer = await post("/bytes");
          expect(answer.text).toBe(bytes.toString("utf8"));
          expect(answer.bytes.equals(bytes)).toBe(true);
          expect(answer.ascii).toBe(array.every((b) => b < 0x80));
          // What the flag promises the writer: the text's UTF-8 bytes are as many as its characters.
          if (answer.ascii) expect(Buffer.byteLength(answer.text)).toBe(answer.text.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("gives the final status after an interim 1xx answer, and any status with its body", async () => {
    behaviours.set("/hints", (_request, response) => {
      response.writeEarlyHints({ link: "</x>; rel=preload" });
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"ok":1}');
    });
    expect(await post("/hints")).toEqual({
      status: 200,
      text: '{"ok":1}',
      bytes: Buffer.from('{"ok":1}'),
      ascii: true,
    });
    behaviours.set("/busy", (_request, response) => {
      response.writeHead(503);
      response.end("busy");
    });
    expect(await post("/busy")).toEqual({
      status: 503,
      text: "busy",
      bytes: Buffer.from("busy"),
      ascii: true,
    });
  });

  it("refuses an answer past the cap with RESPONSE_TOO_LARGE, and the next call is answered", async () => {
    behaviours.set("/large", (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(Buffer.alloc(64 * 1024, 0x61));
    });
    const refused = await post("/large", 16 * 1024).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChaingateError);
    expect((refused as ChaingateError).code).toBe("RESPONSE_TOO_LARGE");
    behaviours.set("/small", (_request, response) => response.end("[]"));
    expect(await post("/small", 16 * 1024)).toEqual({
      status: 200,
      text: "[]",
      bytes: Buffer.from("[]"),
      ascii: true,
    });
  });

  it("rejects with the signal's reason, aborted before the call is sent or while it waits for its answer", async () => {
    const early = new CallAbort();
    const reason = new Error("the other half answered first");
    early.abort(reason);
    await expect(post("/small", 1024, early)).rejects.toBe(reason);
    // Without a reason, undici's own abort error, as its `request` gave.
    const bare = new CallAbort();
    bare.abort(undefined);
    await expect(post("/small", 1024, bare)).rejects.toBeInstanceOf(errors.RequestAbortedError);

    let held: ServerResponse | undefined;
    behaviours.set("/held", (_request, response) => {
      held = response;
    });
    const late = new CallAbort();
    const waiting = post("/held", 1024, late);
    const deadline = Date.now() + 10_000;
    while (held === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(held).toBeDefined();
    late.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(late.listenerCount("abort")).toBe(0);
    held?.destroy();
  });

  it("fails with undici's own error code when the node drops the connection without an answer", async () => {
    behaviours.set("/drop", (request) => request.socket.destroy());
    const error = (await post("/drop").catch((e: unknown) => e)) as { code?: unknown };
    expect(error.code).toBe("UND_ERR_SOCKET");
  });

  it("leaves no listener on a signal once its call is answered", async () => {
    const signal = new CallAbort();
    expect(await post("/small", 1024, signal)).toEqual({
      status: 200,
      text: "[]",
      bytes: Buffer.from("[]"),
      ascii: true,
    });
    expect(signal.listenerCount("abort")).toBe(0);
  });
});
