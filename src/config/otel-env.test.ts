import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load-config.js";
import { readTracing } from "./otel-env.js";

const read = (env: Record<string, string>) => {
  const problems: string[] = [];
  return { settings: readTracing(env, problems), problems };
};

describe("OTEL_* variables", () => {
  it("are off unless an OTLP endpoint is named, and off when the SDK or the exporter is turned off", () => {
    expect(read({})).toEqual({ settings: undefined, problems: [] });
    expect(
      read({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }).settings,
    ).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: "true" }).settings).toBeUndefined();
    expect(read({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }).settings).toBeUndefined();
  });

  it("take the endpoint, protocol (http/protobuf by default) and service name as the specification names them", () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).settings).toEqual({
      protocol: "http/protobuf",
      endpoint: "http://collector:4318/v1/traces",
      serviceName: "chaingate",
    });
    expect(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "gateway-eu",
      }).settings,
    ).toEqual({ protocol: "http/json", endpoint: "https://traces.example/otlp", serviceName: "gateway-eu" });
  });

  it("stop the start with the variable named for a protocol, exporter or endpoint chaingate cannot use", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" };
    expect(() => loadConfig({ env })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not served/);
    expect(read({ OTEL_TRACES_EXPORTER: "zipkin" }).problems).toEqual([
      'OTEL_TRACES_EXPORTER: "zipkin" is not served; use otlp (or none)',
    ]);
    expect(read({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318" }).problems[0]).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: .* is not an http\(s\) URL$/,
    );
  });

  it("never throw, and either name a problem or give an http(s) traces URL, for any values", () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.string(),
      fc.webUrl(),
      fc.constantFrom("http/json", "grpc"),
    );
    fc.assert(
      fc.property(value, value, value, (endpoint, protocol, exporter) => {
        const env: Record<string, string> = {};
        if (endpoint !== undefined) env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
        if (protocol !== undefined) env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
        if (exporter !== undefined) env.OTEL_TRACES_EXPORTER = exporter;
        const { settings, problems } = read(env);
        if (settings !== undefined && problems.length === 0) {
          expect(new URL(settings.endpoint).protocol).toMatch(/^https?:$/);
          expect(["http/json", "http/protobuf"]).toContain(settings.protocol);
        }
      }),
    );
  });
});
