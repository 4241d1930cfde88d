/** New heads pushed by a node over its WebSocket (eth_subscribe newHeads), with reconnects; polling stays as the fallback. */
import type { Logger } from "pino";
import WebSocket from "ws";
import { fieldOf } from "./node-reads.js";

export interface WsHeadWatcherOptions {
  url: string;
  /** Receives every head number the node announces. */
  onHead: (head: number) => void;
  logger: Logger;
}

const MAX_BACKOFF_MS = 30_000;

export class WsHeadWatcher {
  private socket: WebSocket | undefined;
  private stopped = false;
  private backoffMs = 500;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: WsHeadWatcherOptions) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.socket?.terminate();
    this.socket = undefined;
  }

  private connect(): void {
    const { url, logger } = this.options;
    const socket = new WebSocket(url, { handshakeTimeout: 10_000 });
    this.socket = socket;
    socket.on("open", () => {
      this.backoffMs = 500;
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    });
    socket.on("message", (data) => {
      try {
        const message: unknown = JSON.parse(data.toString());
        const number =
          fieldOf(message, "method") === "eth_subscription"
            ? fieldOf(fieldOf(fieldOf(message, "params"), "result"), "number")
            : undefined;
        if (typeof number === "string") this.options.onHead(Number.parseInt(number.slice(2), 16));
      } catch {
        // A message we cannot read changes nothing; polling still runs.
      }
    });
    socket.on("error", (error) => logger.debug({ err: error, url: redact(url) }, "upstream WebSocket error"));
    socket.on("close", () => {
      if (this.stopped) return;
      // Reconnect with backoff; meanwhile the head tracker's polling carries on alone.
      this.retry = setTimeout(() => this.connect(), this.backoffMs);
      this.retry.unref();
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    });
  }
}

function redact(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
