/** Starts OpenTelemetry's SDK when the OTEL_* variables ask for traces: loaded only then, exported in batches, flushed at shutdown. */
import { createRequire } from "node:module";
import { context, propagation, trace } from "@opentelemetry/api";
import type { TracingSettings } from "../config/otel-env.js";
import { useTracer } from "./spans.js";

export interface Tracing {
  /** Exports what is still buffered and stops; spans started after it are not recorded. */
  shutdown(): Promise<void>;
}

/**
 * The SDK's tracer provider, registered globally (AsyncLocalStorage context, W3C trace context
 * and baggage propagation), with an OTLP/HTTP exporter in the asked encoding. The resource names
 * the service (OTEL_SERVICE_NAME, chaingate by default), its version and this instance, plus what
 * OTEL_RESOURCE_ATTRIBUTES adds.
 */
export async function startTracing(settings: TracingSettings, instanceId: string): Promise<Tracing> {
  // The same path from src/tracing and dist/tracing.
  const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };
  const [{ NodeTracerProvider, BatchSpanProcessor }, resources, exporterModule] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    settings.protocol === "http/json"
      ? import("@opentelemetry/exporter-trace-otlp-http")
      : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  const fromEnv = resources.detectResources({ detectors: [resources.envDetector] });
  const resource = resources
    .defaultResource()
    .merge(fromEnv)
    .merge(
      resources.resourceFromAttributes({
        "service.name": settings.serviceName,
        "service.version": version,
        "service.instance.id": instanceId,
      }),
    );
  const exporter = new exporterModule.OTLPTraceExporter({ url: settings.endpoint });
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 })],
  });
  provider.register();
  useTracer(provider.getTracer("chaingate", version));
  return {
    async shutdown() {
      useTracer(undefined);
      await provider.shutdown();
      // Unregistered, so that another runtime in this process (a test's) can register its own.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
