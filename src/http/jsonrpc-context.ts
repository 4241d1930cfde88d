/** Shared set-up for route plugins that answer in JSON-RPC envelopes: lenient JSON parsing, error envelopes. */
import type { FastifyInstance } from "fastify";
import { ChaingateError } from "../errors/chaingate-error.js";
import { errorText } from "../rpc/envelope.js";
import { jsonBodyParser } from "./json-body.js";
import { fromFastifyError } from "./problem.js";

export const JSON_TYPE = "application/json; charset=utf-8";

export function useJsonRpcEnvelopes(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string", bodyLimit }, jsonBodyParser);
  // Route schemas document the envelopes; handlers validate with the same schemas so that failures
  // become JSON-RPC errors (-32602) rather than HTTP 400s.
  app.setValidatorCompiler(() => () => true);
  app.setErrorHandler((error, request, reply) => {
    const translated = fromFastifyError(error, bodyLimit);
    if (!(translated instanceof ChaingateError)) request.log.error({ err: error }, "unexpected error");
    reply.code(200).type(JSON_TYPE).send(errorText(null, translated));
  });
}
