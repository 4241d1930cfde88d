/** Answers `POST /transaction` straight from Node's HTTP server, before Fastify's per-request pipeline, with the route's own checks, answers and refusals. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Static } from "@sinclair/typebox";
import type { ValidateFunction } from "ajv";
import type { Logger } from "pino";
import type { AccessLog } from "../logging/access-log.js";
import type { Metrics } from "../metrics/metrics.js";
import { tracingOn } from "../tracing/spans.js";
import { CreateTransactionBody } from "../tx/transaction-schemas.js";
import type { TransactionService } from "../tx/transaction-service.js";
import { type RateLimiters, takeToken } from "./access-control.js";
import {
  type AdmissionOptions,
  admitCaller,
  type Caller,
  idempotencyKeyOf,
  requestIdOf,
  writeFastAnswer,
} from "./fast-admission.js";
import { parseJsonText } from "./json-body.js";
import { JSON_TYPE } from "./jsonrpc-context.js";
import { fromFastifyError, problemOf } from "./problem.js";
import { handOn, readBody } from "./read-ahead.js";
import { strictBodyValidator } from "./strict-validation.js";

export interface TransactionFastPathOptions extends AdmissionOptions {
  limiters: RateLimiters;
  transactions: TransactionService;
  metrics: Metrics;
  bodyLimit: number;
  /** Where a failure answered 5xx is written, as the full path's error handler writes it. */
  logger: Logger;
  /** Where each answered request's line goes; none while requests are not logged. */
  accessLog?: AccessLog | undefined;
}

type Body = Static<typeof CreateTransactionBody>;

/** The route the full path matches: the metrics and the access log name it alike. */
const ROUTE = "/transaction";

/** A transaction's body is a few hundred bytes; larger ones (and any the route would refuse) go the whole way. */
const MAX_BODY_BYTES = 8 * 1024;

/** What the REST routes parse as JSON: no Content-Type, or JSON in UTF-8. */
const JSON_MEDIA = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** Keys Fastify's JSON parser refuses (prototype poisoning): such a body goes the whole way and is refused there. */
const POISON = /__proto__|constructor/;

/**
 * Through Fastify a transaction paid about a tenth of chaingate's CPU for the framework: routing,
 * the hooks, the body parser, the reply's serializer (#42 item 3). This path takes a request the
 * full path would take the same way: a caller the same guards admit (see admitCaller), a JSON body
 * the route's own validator accepts, and a signing token; tracing off, and no `wait_ms` (the reply
 * then carries a receipt the route's schema shapes). It calls the same service, and answers its
 * hash or its refusal with the full path's status, headers and problem body. Anything else, and
 * anything refused before the service is called, goes to Fastify unchanged with the body already
 * read, so every refusal keeps its one shape and place. Each answer is counted and logged as the
 * full path's is.
 */
export class TransactionFastPath {
  private readonly valid: ValidateFunction<Body>;
  private readonly maxBodyBytes: number;

  constructor(private readonly options: TransactionFastPathOptions) {
    this.valid = strictBodyValidator().compile<Body>(CreateTransactionBody);
    this.maxBodyBytes = Math.min(MAX_BODY_BYTES, options.bodyLimit);
  }

  /** Whether a request is this path's to try: `POST /transaction` (no query string), tracing off. */
  takes(request: IncomingMessage): boolean {
    return request.url === ROUTE && request.method === "POST" && !tracingOn();
  }

  serve(
    request: IncomingMessage,
    response: ServerResponse,
    next: (request: IncomingMessage, response: ServerResponse) => void,
  ): void {
    const type = request.headers["content-type"];
    const caller =
      type === undefined || JSON_MEDIA.test(type)
        ? admitCaller(request, response, this.options, this.maxBodyBytes)
        : undefined;
    if (caller === undefined) {
      next(request, response);
      return;
    }
    const started = performance.now();
    readBody(request, (bytes) => {
      const body = this.bodyOf(bytes);
      if (
        body !== undefined &&
        takeToken(this.options.limiters, caller.tenant, request.socket.remoteAddress, "sign").ok
      ) {
        this.send(request, response, body, caller, started);
        return;
      }
      caller.release();
      handOn(request, bytes);
      next(request, response);
    });
  }

  /** The body when the route would take it as it is; undefined leaves its refusal to the full path. */
  private bodyOf(bytes: Buffer): Body | undefined {
    const text = bytes.toString("utf8");
    if (POISON.test(text)) return undefined;
    let body: unknown;
    try {
      body = parseJsonText(text);
    } catch {
      return undefined;
    }
    if (!this.valid(body) || body.wait_ms !== undefined) return undefined;
    return body;
  }

  private send(
    request: IncomingMessage,
    response: ServerResponse,
    body: Body,
    caller: Caller,
    started: number,
  ): void {
    const id = requestIdOf(request);
    // A caller gone while the transaction was sent hears nothing (the transaction is tracked).
    const answer = (status: number, type: string, text: string) =>
      writeFastAnswer(response, this.options, {
        id,
        url: ROUTE,
        status,
        type,
        text,
        byteLength: undefined,
        started,
        tenant: caller.tenant,
        rpc: undefined,
        remoteAddress: request.socket.remoteAddress,
      });
    this.options.transactions
      .send(body, {
        idempotencyKey: idempotencyKeyOf(request),
        chainHeader: request.headers["x-chain-id"],
        owner: caller.tenant?.keyId ?? null,
      })
      .then(
        (sent) => answer(200, JSON_TYPE, `{"tx_hash":"${sent.tx_hash}"}`),
        (error: unknown) => {
          const problem = problemOf(fromFastifyError(error, this.options.bodyLimit));
          if (problem.status >= 500) this.options.logger.error({ reqId: id, err: error }, "request failed");
          answer(problem.status, PROBLEM_TYPE, JSON.stringify(problem));
        },
      );
  }
}

const PROBLEM_TYPE = "application/problem+json; charset=utf-8";
