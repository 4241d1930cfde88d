/** Request bodies a fast path read before handing the request on to Fastify, which then parses them instead of the spent stream. */
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";

const readAhead = new WeakMap<IncomingMessage, Buffer>();

/** One listener for every request's stream errors: no closure a request. */
const IGNORED = () => {};

/** Reads the whole body, then calls `done` with it (one chunk is not copied). */
export function readBody(request: IncomingMessage, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let length = 0;
  request.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
  });
  // The client went away mid-body: its slot is given back when the response closes.
  request.on("error", IGNORED);
  request.once("end", () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)));
}

/** Keeps a body read ahead for the route Fastify will match (see `bodyStream`). */
export function handOn(request: IncomingMessage, body: Buffer): void {
  readAhead.set(request, body);
}

/**
 * The body stream a route parses: the one a fast path already read, when it did (a Fastify
 * `preParsing` hook on every route a fast path may hand a request on to).
 */
export function bodyStream<T extends Readable>(request: IncomingMessage, payload: T): T | Readable {
  const body = readAhead.get(request);
  if (body === undefined) return payload;
  readAhead.delete(request);
  return Readable.from([body], { objectMode: false });
}
