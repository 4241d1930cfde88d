/** A loopback OTLP/HTTP trace receiver for tests: takes http/json and http/protobuf exports and reads their spans. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** The span's string, integer and boolean attributes, as strings. */
  attributes: Record<string, string>;
  /** The resource's service.name. */
  service: string;
  /** The encoding it came in. */
  encoding: "json" | "protobuf";
}

export interface Collector {
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the exports received. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const type = request.headers["content-type"] ?? "";
      contentTypes.push(type);
      try {
        spans.push(...(type.includes("json") ? jsonSpans(body) : protobufSpans(body)));
        response.writeHead(200, { "content-type": type }).end(type.includes("json") ? "{}" : "");
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}

const attributesOf = (list: JsonKeyValue[] | undefined): Record<string, string> =>
  Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      String(value.stringValue ?? value.intValue ?? value.boolValue),
    ]),
  );

/** OTLP/JSON: ids are hex strings. */
function jsonSpans(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString("utf8")) as {
    resourceSpans: {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans: {
        spans: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          attributes?: JsonKeyValue[];
        }[];
      }[];
    }[];
  };
  return request.resourceSpans.flatMap((rs) => {
    const service = attributesOf(rs.resource?.attributes)["service.name"] ?? "";
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        attributes: attributesOf(s.attributes),
        service,
        encoding: "json" as const,
      })),
    );
  });
}

/** A protobuf message's fields: number to the values (a varint, or the bytes of a length-delimited field). */
function fields(bytes: Uint8Array): Map<number, (bigint | Uint8Array)[]> {
  const out = new Map<number, (bigint | Uint8Array)[]>();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const number = key >> 3;
    let value: bigint | Uint8Array;
    switch (key & 7) {
      case 0:
        value = varint();
        break;
      case 1:
        value = bytes.subarray(at, at + 8);
        at += 8;
        break;
      case 2: {
        const length = Number(varint());
        value = bytes.subarray(at, at + length);
        at += length;
        break;
      }
      case 5:
        value = bytes.subarray(at, at + 4);
        at += 4;
        break;
      default:
        throw new Error(`wire type ${key & 7} not read`);
    }
    out.set(number, [...(out.get(number) ?? []), value]);
  }
  return out;
}

const bytesOf = (v: bigint | Uint8Array | undefined) => (v instanceof Uint8Array ? v : new Uint8Array());
const text = (v: bigint | Uint8Array | undefined) => Buffer.from(bytesOf(v)).toString("utf8");
const hex = (v: bigint | Uint8Array | undefined) => Buffer.from(bytesOf(v)).toString("hex");

/** KeyValue {1 key, 2 AnyValue {1 string, 2 bool, 3 int}}. */
function protobufAttributes(list: (bigint | Uint8Array)[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of list ?? []) {
    const kv = fields(bytesOf(raw));
    const value = fields(bytesOf(kv.get(2)?.[0]));
    const v = value.get(1)?.[0] ?? value.get(2)?.[0] ?? value.get(3)?.[0];
    out[text(kv.get(1)?.[0])] = value.has(1)
      ? text(v)
      : value.has(2)
        ? String(v === 1n)
        : typeof v === "bigint"
          ? v.toString()
          : "";
  }
  return out;
}

/**
 * ExportTraceServiceRequest {1 ResourceSpans {1 Resource {1 attributes}, 2 ScopeSpans {2 Span
 * {1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 9 attributes}}}}.
 */
function protobufSpans(body: Buffer): ReceivedSpan[] {
  return (fields(body).get(1) ?? []).flatMap((rsRaw) => {
    const rs = fields(bytesOf(rsRaw));
    const resource = fields(bytesOf(rs.get(1)?.[0]));
    const service = protobufAttributes(resource.get(1))["service.name"] ?? "";
    return (rs.get(2) ?? []).flatMap((ssRaw) =>
      (fields(bytesOf(ssRaw)).get(2) ?? []).map((spanRaw) => {
        const span = fields(bytesOf(spanRaw));
        return {
          traceId: hex(span.get(1)?.[0]),
          spanId: hex(span.get(2)?.[0]),
          parentSpanId: hex(span.get(4)?.[0]),
          name: text(span.get(5)?.[0]),
          attributes: protobufAttributes(span.get(9)),
          service,
          encoding: "protobuf" as const,
        };
      }),
    );
  });
}
