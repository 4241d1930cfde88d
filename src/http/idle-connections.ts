/** Closes HTTP connections on which nothing has moved either way for too long, by a periodic sweep rather than a timer re-armed on every read and write. */
import type { Server } from "node:http";
import type { Socket } from "node:net";

/** What a sweep saw of a connection: its counters, and since when they have not moved. */
interface Seen {
  read: number;
  written: number;
  pending: number;
  since: number;
}

/**
 * `server.setTimeout(ms)` gives every socket an idle timer that Node re-arms on each read and
 * write and builds anew for each request of a kept-alive connection: 1.8-2.4k instructions a
 * request, counted alone under callgrind (decision 223). A sweep every quarter of the bound does the same
 * job for the connections that need it: one whose counters (bytes read, bytes written, bytes still
 * queued) have not moved for `idleMs` is destroyed, as the timer's default handler would destroy
 * it: a client that never finishes reading a response, or a request left hanging, holds nothing
 * forever. A connection upgraded to a WebSocket is the socket server's (it has its own liveness);
 * it is dropped from the watch when the upgrade is handed over, as Node drops the timer's handler.
 */
export class IdleConnections {
  private readonly seen = new Map<Socket, Seen>();
  private readonly timer: NodeJS.Timeout;
  /** Sweeps run so far (for tests). */
  sweeps = 0;

  constructor(
    server: Server,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {
    const seen = this.seen;
    // One listener for every socket (Node calls it on the socket): no closure a connection.
    function forget(this: Socket): void {
      seen.delete(this);
    }
    server.on("connection", (socket: Socket) => {
      seen.set(socket, { read: -1, written: -1, pending: -1, since: this.now() });
      socket.once("close", forget);
    });
    server.on("upgrade", (_request: unknown, socket: Socket) => seen.delete(socket));
    this.timer = setInterval(() => this.sweep(), Math.max(50, Math.floor(idleMs / 4))).unref();
    server.once("close", () => clearInterval(this.timer));
  }

  /** Connections watched now. */
  get size(): number {
    return this.seen.size;
  }

  private sweep(): void {
    this.sweeps++;
    const now = this.now();
    for (const [socket, seen] of this.seen) {
      if (socket.destroyed) {
        this.seen.delete(socket);
        continue;
      }
      const read = socket.bytesRead;
      const written = socket.bytesWritten;
      const pending = socket.writableLength;
      if (read !== seen.read || written !== seen.written || pending !== seen.pending) {
        seen.read = read;
        seen.written = written;
        seen.pending = pending;
        seen.since = now;
      } else if (now - seen.since >= this.idleMs) {
        this.seen.delete(socket);
        socket.destroy();
      }
    }
  }
}
