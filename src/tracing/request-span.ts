/** A SERVER span per HTTP request, continuing the caller's W3C trace when it sends one; active for all the request's work. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { activeTracer, tracingOn } from "./spans.js";

/** The route's name is set once Fastify knows it (nameRequestSpan); `POST /` is named at once. */
function firstName(request: IncomingMessage): string {
  const path = request.url?.split("?", 1)[0] ?? "";
  return path === "/" ? `${request.method} /` : (request.method ?? "HTTP");
}

/**
 * Serves `request` inside its span. The request and response emitters are bound to the span's
 * context, so work started from their events (the body read, Fastify's hooks) stays inside it.
 */
export function serveInSpan(request: IncomingMessage, response: ServerResponse, serve: () => void): void {
  const tracer = activeTracer();
  if (tracer === undefined) {
    serve();
    return;
  }
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const span = tracer.startSpan(
    firstName(request),
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": request.method ?? "",
        "url.path": request.url?.split("?", 1)[0] ?? "",
        "network.peer.address": request.socket.remoteAddress ?? "",
      },
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  context.bind(active, request);
  context.bind(active, response);
  response.once("close", () => {
    span.setAttribute("http.response.status_code", response.statusCode);
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (!response.writableFinished) span.setAttribute("http.response.aborted", true);
    span.end();
  });
  context.with(active, serve);
}

/** Names the active request span after its route (`POST /transaction`, `GET /transaction/:id`). */
export function nameRequestSpan(method: string, route: string | undefined, requestId: string): void {
  if (!tracingOn()) return;
  const span = trace.getSpan(context.active());
  if (span === undefined) return;
  // The id the answer's x-request-id header and the access log carry.
  span.setAttribute("chaingate.request_id", requestId);
  if (route === undefined) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute("http.route", route);
}
