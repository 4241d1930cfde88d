/** What a tenant is told of a failed webhook attempt: a class of failure, never the raw network error. */

/**
 * The raw errors name addresses, ports and resolver answers of the operator's network (a tenant
 * could map it by pointing webhooks around); the class says what the receiver's owner must fix.
 */
export type FailureClass =
  | "timeout"
  | "connection refused"
  | "connection reset"
  | "unreachable"
  | "dns"
  | "address not public"
  | "tls"
  | "network error";

const BY_CODE: Readonly<Record<string, FailureClass>> = {
  ETIMEDOUT: "timeout",
  UND_ERR_CONNECT_TIMEOUT: "timeout",
  UND_ERR_HEADERS_TIMEOUT: "timeout",
  UND_ERR_BODY_TIMEOUT: "timeout",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  UND_ERR_SOCKET: "connection reset",
  UND_ERR_CLOSED: "connection reset",
  EHOSTUNREACH: "unreachable",
  ENETUNREACH: "unreachable",
  EHOSTDOWN: "unreachable",
  ENOTFOUND: "dns",
  EAI_AGAIN: "dns",
  EAI_FAIL: "dns",
};

/** Marks the refusal of a receiver whose name resolves to a private address (see the guarded lookup). */
export const NOT_PUBLIC = "ECHAINGATE_NOT_PUBLIC";

export function failureClass(error: unknown): FailureClass {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (e.name === "TimeoutError" || e.name === "AbortError") return "timeout";
    if (typeof code === "string") {
      if (code === NOT_PUBLIC) return "address not public";
      if (code in BY_CODE) return BY_CODE[code]!;
      if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code))
        return "tls";
    }
  }
  return "network error";
}
