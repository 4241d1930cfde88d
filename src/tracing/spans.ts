/** Spans around chaingate's work through the OpenTelemetry API: one flag read and nothing else while tracing is off. */
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

export type { Span } from "@opentelemetry/api";

/** Set once, at start, when the OTEL_* variables ask for traces (start-tracing.ts). */
let tracer: Tracer | undefined;

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** The tracer while tracing is on. */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/** Called by startTracing with the SDK's tracer, and with undefined once it is shut down. */
export function useTracer(next: Tracer | undefined): void {
  tracer = next;
}

export interface SpanOptions {
  attributes?: Attributes;
  kind?: SpanKind;
  /** The span's parent; the active context (the request, the transaction being followed) when absent. */
  parent?: Context;
}

/**
 * Runs `work` in a span named `name`, the span active for everything it calls (node calls become
 * its children). A throw marks the span as failed, with the error's code where it has one.
 */
export function inSpan<T>(
  name: string,
  work: (span: Span | undefined) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  // No promise layer of its own while off: the hot paths call it on every request.
  return tracer === undefined ? work(undefined) : runInSpan(tracer, name, work, options);
}

async function runInSpan<T>(
  tracer: Tracer,
  name: string,
  work: (span: Span | undefined) => Promise<T>,
  options: SpanOptions,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Marks `span` failed by `error`: its message, and its code (a chaingate error or a node's) as an attribute. */
export function failed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" || typeof code === "number") span.setAttribute("error.type", String(code));
}

/**
 * The active span's W3C traceparent, to be stored with what outlives the request (a transaction
 * followed by any instance, a webhook event): null while tracing is off or no span is active.
 */
export function currentTraceParent(): string | null {
  if (tracer === undefined || trace.getSpan(context.active()) === undefined) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored traceparent names (a span of another instance too); the root one when none is stored. */
export function storedContext(traceParent: string | null): Context {
  if (traceParent === null) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent: traceParent });
}

/** The span `work` runs in, continuing the trace stored as `traceParent` (nothing while tracing is off). */
export function inStoredTrace<T>(
  traceParent: string | null,
  name: string,
  work: (span: Span | undefined) => Promise<T>,
  attributes?: Attributes,
): Promise<T> {
  if (tracer === undefined) return work(undefined);
  return inSpan(name, work, { parent: storedContext(traceParent), ...(attributes ? { attributes } : {}) });
}

/** The W3C trace headers of the active span, for a request chaingate makes (a webhook delivery). */
export function traceHeaders(): Record<string, string> {
  if (tracer === undefined) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * A CLIENT span for one call to a node, named by its method, the upstream named by its label
 * (scheme, host and port: never the path or query, where a provider keeps its key).
 */
export function inNodeCall<T>(upstream: string, method: string, work: () => Promise<T>): Promise<T> {
  if (tracer === undefined) return work();
  return inSpan(method, work, {
    kind: SpanKind.CLIENT,
    attributes: { "rpc.system": "jsonrpc", "rpc.method": method, "chaingate.upstream": upstream },
  });
}
