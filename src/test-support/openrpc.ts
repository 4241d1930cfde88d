/** Validates results against the Ethereum execution-apis OpenRPC schemas in shared/spec (CC0). */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Ajv2019 from "ajv/dist/2019.js";

export const SPEC_PATH = fileURLToPath(
  new URL("../../test/fixtures/ethereum-execution-apis.openrpc.json", import.meta.url),
);

interface OpenRpcDoc {
  methods: { name: string; result?: { schema: unknown } }[];
  components: { schemas: Record<string, unknown> };
}

const ROOT_ID = "urn:chaingate:openrpc";

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === "$ref" && typeof v === "string" && v.startsWith("#/components/")
          ? `${ROOT_ID}${v}`
          : rewriteRefs(v),
      ]),
    );
  }
  return value;
}

export function openRpcValidator(): {
  has(method: string): boolean;
  check(method: string, result: unknown): string | null;
} {
  const doc = JSON.parse(readFileSync(SPEC_PATH, "utf8")) as OpenRpcDoc;
  const ajv = new Ajv2019.default({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: ROOT_ID, components: rewriteRefs(doc.components) as object });
  const byName = new Map(doc.methods.map((m) => [m.name, m]));
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return {
    has: (method) => byName.get(method)?.result !== undefined,
    check(method, result) {
      let validate = compiled.get(method);
      if (!validate) {
        const schema = byName.get(method)?.result?.schema;
        if (schema === undefined) throw new Error(`${method} is not in the OpenRPC document`);
        validate = ajv.compile(rewriteRefs(schema) as object);
        compiled.set(method, validate);
      }
      return validate(result) ? null : ajv.errorsText(validate.errors);
    },
  };
}
