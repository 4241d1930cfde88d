/** Turns Ajv's schema errors into one readable sentence naming each bad field, what was sent and what to send. */
import type { FastifySchemaValidationError } from "fastify";
import { gotText, listed } from "../rpc/explain-invalid.js";

/** Ajv's error with `verbose` on: the value and the schemas beside the keyword. */
type VerboseError = FastifySchemaValidationError & {
  data?: unknown;
  parentSchema?: { description?: unknown; properties?: Record<string, { description?: unknown }> };
};

function field(error: FastifySchemaValidationError, dataVar: string): string {
  const path = error.instancePath.replace(/^\//, "").replaceAll("/", ".");
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  const name = [path, missing ?? extra].filter(Boolean).join(".");
  return name === "" ? dataVar : name;
}

function reason(error: VerboseError, name: string): string {
  const params = error.params as Record<string, unknown>;
  const got = "data" in error ? gotText(name, error.data) : "";
  switch (error.keyword) {
    case "required": {
      const missing = params.missingProperty as string;
      const description = error.parentSchema?.properties?.[missing]?.description;
      return typeof description === "string" ? `is required: it takes ${description}` : "is required";
    }
    case "additionalProperties":
      return "is not a known field";
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}${got}`;
    case "enum":
      return `must be one of ${listed(params.allowedValues as unknown[])}${got}`;
    case "type":
      return `must be ${String(params.type).replace(",", " or ")}${got}`;
    default: {
      // Ajv's own words ("must be >= 1"), with what the field is for where the schema says.
      const description = error.parentSchema?.description;
      const about = typeof description === "string" ? ` (${description})` : "";
      return `${error.message ?? "is not valid"}${about}${got}`;
    }
  }
}

export function formatValidationErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  // A union of literals fails once per literal ("const"), then as a whole ("anyOf"): the literals
  // of one field are gathered into one list of the values it takes.
  const allowed = new Map<string, unknown[]>();
  for (const error of errors as VerboseError[]) {
    if (error.keyword !== "const") continue;
    const name = field(error, dataVar);
    allowed.set(name, [
      ...(allowed.get(name) ?? []),
      (error.params as { allowedValue: unknown }).allowedValue,
    ]);
  }
  // anyOf/oneOf branches repeat the same field; one line per field is enough.
  const lines = new Map<string, string>();
  for (const error of errors as VerboseError[]) {
    if (error.keyword === "anyOf" || error.keyword === "oneOf") continue;
    const name = field(error, dataVar);
    if (lines.has(name)) continue;
    const values = allowed.get(name);
    const got = "data" in error ? gotText(name, error.data) : "";
    lines.set(
      name,
      values !== undefined && values.length > 1
        ? `${name} must be one of ${listed(values)}${got}`
        : `${name} ${reason(error, name)}`,
    );
  }
  const message = lines.size > 0 ? [...lines.values()].join("; ") : `${dataVar} is not valid`;
  return new Error(message);
}
