/** A loopback webhook receiver for tests: records every delivery, and can be taken down and brought back on its port. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { freePort } from "./ports.js";

export interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

export interface Receiver {
  port: number;
  url: string;
  deliveries: Delivery[];
  /** Answer this status instead of 200 (a receiver that is up but failing). */
  failWith: number | undefined;
  /** Never answer: requests are held open (a receiver that hangs); `held` counts them. */
  hang: boolean;
  held: number;
  up(): Promise<void>;
  down(): Promise<void>;
}

/** Listens on `port`; a port that is taken rejects (it is never an uncaught error). */
function listenOn(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => {
      server.off("listening", listening);
      reject(error);
    };
    const listening = () => {
      server.off("error", failed);
      resolve();
    };
    server.once("error", failed);
    server.once("listening", listening);
    server.listen(port, "127.0.0.1");
  });
}

export async function startReceiver(port = 0): Promise<Receiver> {
  let server: Server | undefined;
  const receiver: Receiver = {
    port,
    url: "",
    deliveries: [],
    failWith: undefined,
    hang: false,
    held: 0,
    async up() {
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (c: Buffer) => chunks.push(c));
        request.on("end", () => {
          if (receiver.hang) {
            receiver.held++;
            return;
          }
          if (receiver.failWith !== undefined) {
            response.writeHead(receiver.failWith).end();
            return;
          }
          const raw = Buffer.concat(chunks).toString("utf8");
          receiver.deliveries.push({
            headers: request.headers,
            raw,
            body: JSON.parse(raw) as Delivery["body"],
          });
          response.writeHead(200).end("ok");
        });
      });
      // Below the ephemeral range (freePort): the port given up while down is still free when it comes back.
      if (receiver.port === 0) receiver.port = await freePort();
      await listenOn(server, receiver.port);
      receiver.port = (server.address() as { port: number }).port;
      receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
    },
    async down() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    },
  };
  if (port === 0) await receiver.up();
  else receiver.url = `http://127.0.0.1:${port}/hook`;
  return receiver;
}
