/** Says what was wrong with a value TypeBox refused: the field, what was sent, and what to send instead. */
import type { TSchema } from "@sinclair/typebox";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";

/** The values a schema allows when it is a closed list (a union of literals, an enum or a const). */
export function allowedValues(schema: TSchema): readonly unknown[] | undefined {
  if ("const" in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  const branches = schema.anyOf as TSchema[] | undefined;
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const values: unknown[] = [];
  for (const branch of branches) {
    const inner = allowedValues(branch);
    if (inner === undefined) return undefined;
    values.push(...inner);
  }
  return values;
}

/** A value as the caller sent it, cut short. */
export function preview(value: unknown, max = 60): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** Fields whose value is never repeated back, even to its sender (logs and proxies keep answers). */
const SECRET_FIELD = /password|passphrase|mnemonic|seed|private|secret|keystore/i;

/**
 * "; got <what was sent>" for a refusal: a scalar as sent (cut short), an object or array by its
 * kind only (it may hold a secret field beside the bad one), nothing for a secret field.
 */
export function gotText(field: string, value: unknown): string {
  if (SECRET_FIELD.test(field)) return "";
  if (Array.isArray(value)) return "; got an array";
  if (typeof value === "object" && value !== null) return "; got an object";
  return `; got ${preview(value)}`;
}

/** A closed list as a refusal names it: `"a", "b", "c"`. */
export const listed = (values: readonly unknown[]) => values.map((v) => JSON.stringify(v)).join(", ");

/** What TypeBox's kinds of mistake ask for, in words (the rest keep TypeBox's own message). */
function expected(error: ValueError): string | undefined {
  const schema = error.schema as Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.String:
      return "a string";
    case ValueErrorType.Number:
      return "a number";
    case ValueErrorType.Integer:
      return "an integer";
    case ValueErrorType.Boolean:
      return "true or false";
    case ValueErrorType.Object:
      return "an object";
    case ValueErrorType.Array:
      return "an array";
    case ValueErrorType.StringMinLength:
      return `at least ${String(schema.minLength)} characters`;
    case ValueErrorType.StringMaxLength:
      return `at most ${String(schema.maxLength)} characters`;
    case ValueErrorType.ArrayMinItems:
      return `at least ${String(schema.minItems)} items`;
    case ValueErrorType.ArrayMaxItems:
      return `at most ${String(schema.maxItems)} items`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `at least ${String(schema.minimum)}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `at most ${String(schema.maximum)}`;
    default:
      return undefined;
  }
}

/**
 * One sentence for the first thing wrong with a value: `role must be one of "admin", "member";
 * got "owner"`, `wallet_id is missing: it takes a wallet id`, `amount must be a string; got 5`.
 * A schema's own description says best what it takes, so it is used where there is one.
 */
export function explainValueError(name: string, error: ValueError): string {
  const schema = error.schema;
  const description = typeof schema.description === "string" ? schema.description : undefined;
  const examples = schema.examples as unknown;
  const example =
    Array.isArray(examples) && examples.length > 0 ? `, e.g. ${JSON.stringify(examples[0])}` : "";
  const allowed = allowedValues(schema);
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return `${name} is not a known field`;
  if (error.value === undefined) {
    const takes = allowed ? `one of ${listed(allowed)}` : description;
    return takes === undefined ? `${name} is missing` : `${name} is missing: it takes ${takes}${example}`;
  }
  const got = gotText(name, error.value);
  if (allowed) return `${name} must be one of ${listed(allowed)}${got}`;
  if (description !== undefined) return `${name} is not valid: ${description}${example}${got}`;
  const words = expected(error);
  return words === undefined
    ? `${name} is not valid: ${error.message}${got}`
    : `${name} must be ${words}${got}`;
}
