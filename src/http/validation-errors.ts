/** Turns Ajv's schema errors into one readable sentence naming each bad field. */
import type { FastifySchemaValidationError } from "fastify";

function field(error: FastifySchemaValidationError, dataVar: string): string {
  const path = error.instancePath.replace(/^\//, "").replaceAll("/", ".");
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  const name = [path, missing ?? extra].filter(Boolean).join(".");
  return name === "" ? dataVar : name;
}

function reason(error: FastifySchemaValidationError): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a known field";
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "type":
      return `must be ${String(params.type).replace(",", " or ")}`;
    default:
      return error.message ?? "is not valid";
  }
}

export function formatValidationErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  // anyOf/oneOf branches repeat the same field; one line per field is enough.
  const lines = new Map<string, string>();
  for (const error of errors) {
    if (error.keyword === "anyOf" || error.keyword === "oneOf") continue;
    const name = field(error, dataVar);
    if (!lines.has(name)) lines.set(name, `${name} ${reason(error)}`);
  }
  const message = lines.size > 0 ? [...lines.values()].join("; ") : `${dataVar} is not valid`;
  return new Error(message);
}
