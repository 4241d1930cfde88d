/** OpenTelemetry's standard OTEL_* variables read once at start: whether traces are exported, where and how. */

/** What tracing was asked for; absent: tracing is off and no OpenTelemetry code is loaded. */
export interface TracingSettings {
  /** http/json or http/protobuf (the OTLP/HTTP encodings); gRPC is not served. */
  readonly protocol: "http/json" | "http/protobuf";
  /** The collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT, /v1/traces appended) or traces URL as given. */
  readonly endpoint: string;
  readonly serviceName: string;
}

const PROTOCOLS = new Set(["http/json", "http/protobuf"]);

/**
 * Tracing is on when an OTLP endpoint is named (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT), unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The
 * protocol defaults to http/protobuf, as the specification says; a protocol chaingate does not
 * export with, or an endpoint that is not a URL, stops the start with the variable named.
 */
export function readTracing(
  env: Record<string, string | undefined>,
  problems: string[],
): TracingSettings | undefined {
  const value = (name: string) => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === "" ? undefined : raw;
  };
  if (value("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = value("OTEL_TRACES_EXPORTER");
  if (exporter !== undefined && exporter !== "otlp") {
    if (exporter !== "none")
      problems.push(`OTEL_TRACES_EXPORTER: "${exporter}" is not served; use otlp (or none)`);
    return undefined;
  }
  const tracesEndpoint = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const baseEndpoint = value("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (tracesEndpoint === undefined && baseEndpoint === undefined) return undefined;
  const protocolName = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = value(protocolName) ?? "http/protobuf";
  if (!PROTOCOLS.has(protocol))
    problems.push(`${protocolName}: "${protocol}" is not served; use http/protobuf or http/json`);
  const endpoint = tracesEndpoint ?? `${(baseEndpoint ?? "").replace(/\/+$/, "")}/v1/traces`;
  const endpointName = tracesEndpoint ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  if (!/^https?:$/.test(safeProtocol(endpoint)))
    problems.push(`${endpointName}: "${tracesEndpoint ?? baseEndpoint}" is not an http(s) URL`);
  return {
    protocol: protocol as TracingSettings["protocol"],
    endpoint,
    serviceName: value("OTEL_SERVICE_NAME") ?? "chaingate",
  };
}

function safeProtocol(url: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    return "";
  }
}
