/** Node's HTTP server under Fastify, with the fast paths in front of Fastify's handler. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { FastifyServerFactory } from "fastify";
import { serveInSpan } from "../tracing/request-span.js";
import { tracingOn } from "../tracing/spans.js";
import { IdleConnections } from "./idle-connections.js";
import type { ReadFastPath } from "./read-fast-path.js";
import type { TransactionFastPath } from "./transaction-fast-path.js";

type Next = (request: IncomingMessage, response: ServerResponse) => void;

/** The fast paths: `POST /transaction` to its own, everything else to the read path (which hands on what it does not take). */
export class FastPaths {
  constructor(
    private readonly read: ReadFastPath,
    private readonly transaction: TransactionFastPath,
  ) {}

  serve(request: IncomingMessage, response: ServerResponse, next: Next): void {
    if (this.transaction.takes(request)) this.transaction.serve(request, response, next);
    else this.read.serve(request, response, next);
  }
}

/**
 * HTTP requests from arrival until their response closes, on every path: a lone transaction's
 * commit may wait for the disk on the event loop when it is the only one (decision 189).
 */
export class OpenRequests {
  count = 0;
  /** One listener shared by every response: no closure a request. */
  private readonly closed = () => {
    this.count--;
  };

  opened(response: ServerResponse): void {
    this.count++;
    response.on("close", this.closed);
  }
}

/**
 * Fastify's HTTP/1 server with the fast paths in front of its handler, set up as Fastify sets up
 * its own (keep-alive and request timeouts), but for the connection timeout: a sweep closes idle
 * connections instead of a timer on every socket (see IdleConnections). `fastPaths` is read per request: they
 * exist once the dispatcher does, after Fastify is made, and not while Fastify closes. Every
 * request is counted in `open`.
 */
export function serverWithFastPaths(
  fastPaths: () => FastPaths | undefined,
  open: OpenRequests,
): FastifyServerFactory {
  return (handler, options) => {
    const serve = (request: IncomingMessage, response: ServerResponse) => {
      const paths = fastPaths();
      if (paths === undefined) handler(request, response);
      else paths.serve(request, response, handler);
    };
    // No span and no closure a request while tracing is off (the cache hit's path is ~25 µs).
    const server: Server = createServer(options.http ?? {}, (request, response) => {
      open.opened(response);
      if (tracingOn()) serveInSpan(request, response, () => serve(request, response));
      else serve(request, response);
    });
    const { keepAliveTimeout, requestTimeout, connectionTimeout } = options as Record<string, unknown>;
    if (typeof keepAliveTimeout === "number") server.keepAliveTimeout = keepAliveTimeout;
    if (typeof requestTimeout === "number") server.requestTimeout = requestTimeout;
    if (typeof connectionTimeout === "number" && connectionTimeout > 0)
      new IdleConnections(server, connectionTimeout);
    return server;
  };
}
