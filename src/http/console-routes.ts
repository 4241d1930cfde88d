/** The operator console: static files from console/, read once at start, served with no CDN and no build step. */
import { readFileSync } from "node:fs";
import type { FastifyPluginAsync } from "fastify";
import { notFoundProblem } from "./problem.js";

const JS = "text/javascript; charset=utf-8";

/** Every file the console is made of (one ES module per page, no build step); nothing else under /console is served. */
const FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "console.js": JS,
  "lib.js": JS,
  "forms.js": JS,
  "page-network.js": JS,
  "page-members.js": JS,
  "page-wallets.js": JS,
  "page-activity.js": JS,
  "page-actions.js": JS,
  "page-audit.js": JS,
  "console.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const root = new URL("../../console/", import.meta.url);
  const files = new Map(
    Object.entries(FILES).map(([name, type]) => [name, { type, body: readFileSync(new URL(name, root)) }]),
  );
  const serve = (name: string) => files.get(name)!;
  // Browsers ask for /favicon.ico whatever the page says; an SVG answers it.
  app.get("/favicon.ico", { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type(serve("favicon.svg").type)
      .header("cache-control", "max-age=86400")
      .send(serve("favicon.svg").body),
  );
  app.get<{ Params: { file?: string } }>(
    "/console/:file?",
    { schema: { hide: true } },
    async (request, reply) => {
      const name = request.params.file || "index.html";
      const file = files.get(name);
      if (!file) {
        return reply
          .code(404)
          .type("application/problem+json")
          .send(notFoundProblem(`No console file ${name}`));
      }
      // The page holds no data (everything comes from the API with the operator's key), so it may be cached briefly.
      return reply.type(serve(name).type).header("cache-control", "no-cache").send(file.body);
    },
  );
};
