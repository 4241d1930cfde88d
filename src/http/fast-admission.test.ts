/** writeFastAnswer's bytes on a real socket (an ASCII answer written as Latin-1, any other as UTF-8, each exactly its text's UTF-8 bytes), and the Content-Length read the fast paths shortcut. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { Client } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Metrics } from "../metrics/metrics.js";
import { contentLengthOf, writeFastAnswer } from "./fast-admission.js";

let server: Server;
let client: Client;
/** The next answer's text and whether its length is passed (as a cached answer's is) or counted. */
let next: { text: string; known: boolean } = { text: "", known: false };
const counted: string[] = [];
const metrics = { observeFastAnswer: (route: string) => counted.push(route) } as unknown as Metrics;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const { text, known } = next;
      writeFastAnswer(
        response,
        { metrics },
        {
          id: "r-1",
          url: "/",
          status: 200,
          type: "application/json",
          text,
          byteLength: known ? Buffer.byteLength(text) : undefined,
          started: performance.now(),
          tenant: null,
          rpc: "eth_chainId",
          remoteAddress: undefined,
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

async function answered(text: string, known: boolean): Promise<{ bytes: Buffer; length: string }> {
  next = { text, known };
  const reply = await client.request({ method: "POST", path: "/", body: "{}" });
  const bytes = Buffer.from(await reply.body.arrayBuffer());
  return { bytes, length: String(reply.headers["content-length"]) };
}

it("writes every answer as its UTF-8 bytes, ASCII or not, its length known or counted", async () => {
  for (const text of ['{"result":"0x1"}', '{"result":"é ✓ 😀"}', '{"result":"\u00ff\u0080"}', ""]) {
    for (const known of [true, false]) {
      const { bytes, length } = await answered(text, known);
      expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
      expect(length).toBe(String(Buffer.byteLength(text)));
    }
  }
  expect(counted.length).toBe(8);
});

it("holds for any text (property)", async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: "binary", maxLength: 200 }), fc.boolean(), async (text, known) => {
      const { bytes, length } = await answered(text, known);
      expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
      expect(length).toBe(String(Buffer.byteLength(text)));
    }),
    { numRuns: 150 },
  );
});

it("reads a Content-Length of plain digits as Number does, and anything else as no length (property)", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.nat({ max: 2 ** 40 }).map(String),
        fc.stringMatching(/^[0-9]{1,16}$/),
        fc.string({ maxLength: 8 }),
        fc.constantFrom("", " 5", "5 ", "+5", "-5", "0x10", "1e3", "5.0", "\u0665"),
      ),
      (header) => {
        const size = contentLengthOf(header);
        if (/^[0-9]{1,15}$/.test(header)) expect(size).toBe(Number(header));
        else expect(size).toBeNaN();
      },
    ),
    { numRuns: 2000 },
  );
  expect(contentLengthOf(undefined)).toBeNaN();
});
