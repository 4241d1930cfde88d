/** Validation for REST-style routes: bodies strictly typed (a "5" is not a number), query strings coerced. */
import { Ajv } from "ajv";
import type { FastifyInstance } from "fastify";

// int32 is documentation for OpenAPI; the schemas' minimum/maximum already bound the value.
const formats = { int32: true } as const;

/** The validator of a REST body: what the routes use, and what a fast path checks a body with before taking it. */
export function strictBodyValidator(): Ajv {
  // verbose: a refusal says what was sent (validation-errors.ts); it costs nothing while a value is valid.
  return new Ajv({
    allErrors: true,
    coerceTypes: false,
    strict: false,
    useDefaults: false,
    formats,
    verbose: true,
  });
}

export function useStrictValidation(app: FastifyInstance): void {
  const strict = strictBodyValidator();
  const coercing = new Ajv({ allErrors: true, coerceTypes: true, strict: false, formats, verbose: true });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === "body" ? strict.compile(schema) : coercing.compile(schema),
  );
}
