/** Bodies of the REST routes: JSON, with or without a Content-Type header; another media type is named as the problem. */
import type { FastifyInstance } from "fastify";
import { ChaingateError } from "../errors/chaingate-error.js";
import { jsonBodyParser } from "./json-body.js";

/**
 * curl -d and many scripts send no Content-Type (or a form type by default): a body without one is
 * read as JSON, as the Native paths do; a body labelled as something else is refused with a message
 * that says what to send, instead of a bare 415.
 */
export function useRestBodies(app: FastifyInstance): void {
  // Fastify reads text/plain as a string by default, which then fails validation obscurely.
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser("*", { parseAs: "string" }, (request, body, done) => {
    if (request.headers["content-type"] === undefined) {
      jsonBodyParser(request, body as string, done);
      return;
    }
    done(
      new ChaingateError(
        `the body must be JSON: send it with Content-Type: application/json (got ${JSON.stringify(request.headers["content-type"])})`,
        { code: "UNSUPPORTED_MEDIA_TYPE" },
      ),
    );
  });
}
