/** RFC 9457 problem bodies for the REST-style groups (wallets, /transaction). */
import { ChaingateError } from "../errors/chaingate-error.js";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  retryable: boolean;
  errors?: unknown;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

export function problemOf(error: unknown): Problem {
  if (error instanceof ChaingateError) {
    const status = error.status;
    const problem: Problem = {
      type: `urn:chaingate:error:${error.code.toLowerCase().replaceAll("_", "-")}`,
      title: TITLES[status] ?? "Error",
      status,
      detail: error.message,
      code: error.code,
      retryable: error.retryable,
    };
    if (error.data !== undefined) problem.errors = error.data;
    return problem;
  }
  return {
    type: "urn:chaingate:error:internal",
    title: TITLES[500]!,
    status: 500,
    detail: "Internal error",
    code: "INTERNAL",
    retryable: false,
  };
}

/** Stable names for Fastify's own request errors (its FST_ codes are an implementation detail). */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "INVALID_JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "INVALID_JSON",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "INVALID_CONTENT_LENGTH",
};

/** Translates Fastify's own errors (validation, body limits) into ChaingateErrors at the boundary. */
export function fromFastifyError(error: unknown, bodyLimit: number): unknown {
  if (error instanceof ChaingateError) return error;
  const e = error as { code?: string; statusCode?: number; validation?: unknown; message?: string };
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new ChaingateError(`Request body larger than ${bodyLimit} bytes`, {
      code: "BODY_TOO_LARGE",
      status: 413,
      rpcCode: -32600,
    });
  }
  if (e.validation !== undefined) {
    return new ChaingateError(e.message ?? "request is not valid", {
      code: "VALIDATION_FAILED",
      status: 400,
      rpcCode: -32602,
      data: e.validation,
    });
  }
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return new ChaingateError(e.message ?? "bad request", {
      code: FASTIFY_CODES[e.code ?? ""] ?? (e.code ?? "BAD_REQUEST").replace(/^FST_ERR_/, ""),
      status: e.statusCode,
      rpcCode: -32600,
    });
  }
  return error;
}

/** The 404 problem body for a path nothing serves. */
export function notFoundProblem(detail: string) {
  return {
    type: "urn:chaingate:error:not-found",
    title: "Not Found",
    status: 404,
    detail,
    code: "NOT_FOUND",
    retryable: false,
  };
}
