import Fastify, { type FastifyBaseLogger, LogController } from "fastify";
import { expect, it } from "vitest";
import { createLogger } from "./create-logger.js";
import { lazyChildLogger } from "./lazy-child.js";

it("makes no child for a request that logs nothing; a line logged names its request, redacted as ever", async () => {
  const lines: string[] = [];
  const logger = createLogger("info", { write: (line: string) => void lines.push(line) });
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    genReqId: () => "req-1",
  });
  app.get("/quiet", async (request) => {
    request.log.debug("below the level: dropped");
    return { ok: true };
  });
  app.get("/loud", async (request) => {
    request.log.warn({ password: "p4ss" }, "something to say");
    return { ok: true };
  });
  try {
    await app.ready();
    // Fastify's own start-up children (its plugin contexts) are not a request's.
    const before = children;
    expect((await app.inject("/quiet")).statusCode).toBe(200);
    expect((await app.inject("/quiet")).statusCode).toBe(200);
    expect(children - before).toBe(0);
    expect(lines).toEqual([]);
    expect((await app.inject("/loud")).statusCode).toBe(200);
    expect(children - before).toBe(1);
    const line = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ reqId: "req-1", msg: "something to say", level: 40 });
    expect(JSON.stringify(line)).not.toContain("p4ss");
  } finally {
    await app.close();
  }
});
