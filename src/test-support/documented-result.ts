/** Checks an operation's result against the type /openapi.json gives it, as a generated client would read it. */

import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { TestRuntime } from "./test-runtime.js";

const documents = new Map<string, Promise<Record<string, unknown>>>();
const checks = new Map<string, ValidateFunction>();
const ajv = new Ajv2020({ strict: false, allErrors: true });

async function documentOf(rt: TestRuntime): Promise<Record<string, unknown>> {
  let document = documents.get(rt.url);
  if (document === undefined) {
    document = fetch(`${rt.url}/openapi.json`).then((r) => r.json() as Promise<Record<string, unknown>>);
    documents.set(rt.url, document);
  }
  return document;
}

/** Throws, naming every mismatch, when `result` is not what the document says `POST /<path>` answers. */
export async function expectDocumentedResult(rt: TestRuntime, path: string, result: unknown): Promise<void> {
  let check = checks.get(path);
  if (check === undefined) {
    const document = (await documentOf(rt)) as {
      paths: Record<
        string,
        { post?: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }
      >;
    };
    const envelope = document.paths[`/${path}`]?.post?.responses["200"]?.content["application/json"]
      ?.schema as { properties?: { result?: Record<string, unknown> } } | undefined;
    const schema = envelope?.properties?.result;
    if (schema === undefined) throw new Error(`/openapi.json gives POST /${path} no result type`);
    check = ajv.compile(schema);
    checks.set(path, check);
  }
  if (!check(result))
    throw new Error(
      `POST /${path} answered a result its documented type refuses: ${ajv.errorsText(check.errors)}`,
    );
}
