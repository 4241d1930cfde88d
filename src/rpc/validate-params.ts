/** Compiles a method's parameter list into a validator that names the expected shape on failure. */
import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { invalidParams } from "../errors/rpc-errors.js";
import { allowedValues, explainValueError, listed, preview } from "./explain-invalid.js";
import type { MethodSpec } from "./method-spec.js";

/** A parameter whose value is never repeated back (personal_unlockAccount's and personal_sign's password). */
const SECRET_PARAM = /password/i;

export type ParamsValidator = (params: unknown) => unknown[];

function describe(schema: TSchema): string {
  return (
    (schema.description as string | undefined) ?? (schema.title as string | undefined) ?? "a valid value"
  );
}

export function shapeOf(spec: MethodSpec): string {
  return `[${spec.params.map((p) => (p.required ? p.name : `${p.name}?`)).join(", ")}]`;
}

export function compileParams(spec: MethodSpec): ParamsValidator {
  const checks: TypeCheck<TSchema>[] = spec.params.map((p) => TypeCompiler.Compile(p.schema));
  const shape = shapeOf(spec);
  const fail = (detail: string) =>
    invalidParams(`${spec.name} expects ${shape}: ${detail}`, { expected: shape });

  return (params) => {
    const list = params === undefined || params === null ? [] : params;
    if (!Array.isArray(list)) throw fail("params must be an array");
    if (list.length > spec.params.length) {
      throw fail(`too many params (${list.length}, at most ${spec.params.length})`);
    }
    const out: unknown[] = [];
    for (let i = 0; i < spec.params.length; i++) {
      const param = spec.params[i]!;
      const value = list[i];
      const absent = i >= list.length || (value === null && !param.required);
      if (absent) {
        if (param.required) throw fail(`missing params[${i}] (${param.name})`);
        if (param.default !== undefined) {
          out.push(param.default);
          continue;
        }
        // An absent optional keeps its place only when a later parameter is given.
        if (!list.slice(i + 1).some((v) => v !== null && v !== undefined)) break;
        out.push(null);
        continue;
      }
      const check = checks[i]!;
      if (!check.Check(value)) {
        const first = check.Errors(value).First();
        const allowed = allowedValues(param.schema);
        const must = allowed === undefined ? describe(param.schema) : `one of ${listed(allowed)}`;
        // Inside an object: the field, what was sent there and what it takes.
        const inner =
          first && first.path !== ""
            ? ` (${explainValueError(first.path.slice(1).replaceAll("/", "."), first)})`
            : "";
        const got = SECRET_PARAM.test(param.name) ? "" : `; got ${preview(value, 80)}`;
        throw fail(`params[${i}] (${param.name}) must be ${must}${inner}${got}`);
      }
      out.push(value);
    }
    const problem = spec.refine?.(out);
    if (problem) throw fail(problem);
    return out;
  };
}
