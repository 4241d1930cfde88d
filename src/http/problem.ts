/** RFC 9457 problem bodies for the REST-style groups (wallets, /transaction). */
import { noteAnswered } from "../errors/answered-codes.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { ErrorCode } from "../errors/codes.js";

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
  426: "Upgrade Required",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export function problemOf(error: unknown): Problem {
  if (error instanceof ChaingateError) {
    noteAnswered(error.code);
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
  return problemOf(new ChaingateError("Internal error", { code: "INTERNAL" }));
}

/** Stable names for Fastify's own request errors (its FST_ codes are an implementation detail). */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "INVALID_JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "INVALID_JSON",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "INVALID_CONTENT_LENGTH",
};

/**
 * One schema error as the answer's `errors` list shows it: where and which rule, never the value
 * sent or the schemas (Ajv's verbose errors carry both, and a value may sit beside a password).
 */
function validationEntry(entry: unknown) {
  const { instancePath, schemaPath, keyword, params, message } = entry as Record<string, unknown>;
  return { instancePath, schemaPath, keyword, params, message };
}

/** Translates Fastify's own errors (validation, body limits) into ChaingateErrors at the boundary. */
export function fromFastifyError(error: unknown, bodyLimit: number): unknown {
  if (error instanceof ChaingateError) return error;
  const e = error as { code?: string; statusCode?: number; validation?: unknown; message?: string };
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new ChaingateError(`Request body larger than ${bodyLimit} bytes`, {
      code: "BODY_TOO_LARGE",
    });
  }
  if (e.validation !== undefined) {
    return new ChaingateError(e.message ?? "request is not valid", {
      code: "VALIDATION_FAILED",
      data: Array.isArray(e.validation) ? e.validation.map(validationEntry) : [],
    });
  }
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return new ChaingateError(e.message ?? "bad request", {
      code: FASTIFY_CODES[e.code ?? ""] ?? "BAD_REQUEST",
      // Fastify knows which 4xx its own refusal is (404, 405, 415, ...).
      status: e.statusCode,
    });
  }
  return error;
}

/** The 404 problem body for a path nothing serves. */
export function notFoundProblem(detail: string): Problem {
  return problemOf(new ChaingateError(detail, { code: "NOT_FOUND" }));
}
