/** Native paths (`POST /<method>`) and the standard JSON-RPC endpoint (`POST /`), both from the method table. */

import { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { invalidConsensus, invalidRequest } from "../errors/rpc-errors.js";
import { consensusRefusal, type RpcDispatcher } from "../rpc/dispatcher.js";
import { errorText, type RequestId, readNativeRequest, readRpcRequest, salvageId } from "../rpc/envelope.js";
import {
  ChainQuerySchema,
  JsonRpcRequestSchema,
  nativeBodySchema,
  ReadQuerySchema,
  ResponseEnvelopeSchema,
} from "../rpc/envelope-schemas.js";
import { METHODS, type MethodSpec } from "../rpc/method-table.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { ownerOf, tenantOf } from "./access-control.js";
import type { AnswerAccount, AnswerBudget } from "./answer-budget.js";
import { answerCall } from "./answer-call.js";
import { JSON_TYPE, useJsonRpcEnvelopes } from "./jsonrpc-context.js";
import { bodyStream } from "./read-ahead.js";

export interface RpcRoutesOptions {
  chains: ChainRegistry;
  dispatcher: RpcDispatcher;
  batchLimit: number;
  bodyLimit: number;
  /** Largest answer to one call, and to one whole batch. */
  maxResponseBytes: number;
  /** Answer bytes held until written, per key and per process. */
  answers: AnswerBudget;
}

const chainHeader = {
  "x-chain-id": Type.Optional(Type.String({ description: "chain id; same as ?chain_id" })),
};

const idempotencyHeader = {
  "idempotency-key": Type.Optional(
    Type.String({
      description: "eth_sendTransaction: retries with the same key send once (in a batch: key#id)",
    }),
  ),
};

const consensusHeader = {
  "chaingate-consensus": Type.Optional(
    Type.String({
      description:
        "how many upstreams must answer each node read alike (1 to 16); a disagreement answers UPSTREAMS_DISAGREE, or the chain's `onDisagreement` policy",
    }),
  ),
};

/** Most upstreams one consensus may ask for: more is a typo, not a deployment. */
const MAX_CONSENSUS = 16;

/** `consensus=N` or `Chaingate-Consensus: N` as a number, undefined when absent. */
export function parseConsensus(raw: unknown, name: string): number | undefined {
  if (raw === undefined) return undefined;
  const text = typeof raw === "string" ? raw.trim() : "";
  const n = /^[0-9]{1,2}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_CONSENSUS))
    throw invalidConsensus(
      `${name} must be a whole number from 1 to ${MAX_CONSENSUS}, got ${JSON.stringify(String(raw).slice(0, 20))}`,
    );
  return n;
}

function selectChain(chains: ChainRegistry, request: FastifyRequest): Chain {
  return chains.select((request.query as { chain_id?: unknown }).chain_id, request.headers["x-chain-id"]);
}

export const rpcRoutes: FastifyPluginAsync<RpcRoutesOptions> = async (app: FastifyInstance, options) => {
  useJsonRpcEnvelopes(app, options.bodyLimit);
  const answers = answerer(options);
  for (const spec of METHODS) nativeRoute(app, spec, options.chains, answers);
  jsonRpcRoute(app, options, answers);
};

interface Answerer {
  /** One call answered as envelope text within the request's answer account (never throws). */
  call(
    chain: Chain,
    id: RequestId,
    method: string,
    params: unknown,
    request: FastifyRequest,
    account: AnswerAccount,
    inBatch?: boolean,
    consensus?: number,
  ): Promise<string>;
  /** The request's answer account, released once the response is written or the client is gone. */
  accountOf(request: FastifyRequest, reply: FastifyReply, what: string): AnswerAccount;
}

function answerer(options: RpcRoutesOptions): Answerer {
  const { dispatcher, maxResponseBytes, answers } = options;
  return {
    accountOf(request, reply, what) {
      const account = answers.open(tenantOf(request), maxResponseBytes, what);
      const release = () => account.release();
      reply.raw.once("finish", release);
      reply.raw.once("close", release);
      return account;
    },
    call(chain, id, method, params, request, account, inBatch = false, consensus) {
      const header = request.headers["idempotency-key"];
      const key = typeof header === "string" ? header : undefined;
      const context = {
        tenant: tenantOf(request),
        owner: ownerOf(request),
        // One key for a whole batch would make its calls collide: each call uses key#id.
        idempotencyKey: key === undefined ? undefined : inBatch ? `${key}#${JSON.stringify(id)}` : key,
        mayHoldMore: () => account.check(),
        consensus,
      };
      return answerCall(dispatcher, chain, id, method, params, context, {
        maxResponseBytes,
        logUnexpected: (error) => request.log.error({ err: error }, "unexpected error in JSON-RPC call"),
        account,
      });
    },
  };
}

/** `POST /<method>`: one call of one method, its params in the body, the chain and a consensus in the query. */
function nativeRoute(app: FastifyInstance, spec: MethodSpec, chains: ChainRegistry, answers: Answerer): void {
  const { call, accountOf } = answers;
  app.post(
    `/${spec.name}`,
    {
      // A body the read fast path read before handing the request on (a cache miss).
      preParsing: (request, _reply, payload, done) => done(null, bodyStream(request.raw, payload)),
      schema: {
        tags: [spec.inSpec ? "Native" : "Native (client methods)"],
        summary: spec.summary,
        operationId: spec.name,
        querystring: consensusRefusal(spec.name) === undefined ? ReadQuerySchema : ChainQuerySchema,
        headers: Type.Object(
          spec.handler === "custody" ? { ...chainHeader, ...idempotencyHeader } : chainHeader,
        ),
        body: nativeBodySchema(spec),
        response: { 200: ResponseEnvelopeSchema },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      reply.type(JSON_TYPE);
      let id: RequestId = salvageId(request.body, 1);
      try {
        const chain = selectChain(chains, request);
        const parsed = readNativeRequest(request.body, spec.name);
        id = parsed.id;
        const consensus = parseConsensus(
          (request.query as { consensus?: unknown }).consensus,
          "the consensus parameter",
        );
        return await call(
          chain,
          id,
          spec.name,
          parsed.params,
          request,
          accountOf(request, reply, "the answer"),
          false,
          consensus,
        );
      } catch (error) {
        return errorText(id, error);
      }
    },
  );
}

/** `POST /`: a JSON-RPC call or batch; `Chaingate-Consensus` covers its node reads. */
function jsonRpcRoute(app: FastifyInstance, options: RpcRoutesOptions, answers: Answerer): void {
  const { chains, batchLimit } = options;
  const { call, accountOf } = answers;
  app.post(
    "/",
    {
      // A body the read fast path read before handing the request on.
      preParsing: (request, _reply, payload, done) => done(null, bodyStream(request.raw, payload)),
      schema: {
        tags: ["JSON-RPC"],
        summary: "Standard JSON-RPC 2.0 endpoint (single call or batch) for ethers, viem, web3.js and cast",
        operationId: "jsonRpc",
        querystring: ChainQuerySchema,
        headers: Type.Object({ ...chainHeader, ...idempotencyHeader, ...consensusHeader }),
        body: Type.Union([JsonRpcRequestSchema, Type.Array(JsonRpcRequestSchema, { maxItems: batchLimit })]),
        response: {
          200: Type.Union([ResponseEnvelopeSchema, Type.Array(ResponseEnvelopeSchema)]),
          204: Type.Null({ description: "only notifications were sent" }),
        },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      reply.type(JSON_TYPE);
      const body = request.body;
      let chain: Chain;
      let consensus: number | undefined;
      try {
        chain = selectChain(chains, request);
        consensus = parseConsensus(request.headers["chaingate-consensus"], "Chaingate-Consensus");
        if (body === undefined) throw invalidRequest("the body must hold a JSON-RPC request or batch");
        if (Array.isArray(body)) {
          if (body.length === 0) throw invalidRequest("a batch must not be empty");
          if (body.length > batchLimit) throw invalidRequest(`a batch holds at most ${batchLimit} calls`);
        }
      } catch (error) {
        return errorText(Array.isArray(body) ? null : salvageId(body, null), error);
      }
      // The whole answer is one account: past its ceiling (or the key's and the process's budget),
      // calls answer an error instead, and calls not yet at a node do not go to one.
      const account = accountOf(request, reply, Array.isArray(body) ? "the batch answer" : "the answer");
      const one = async (item: unknown, inBatch = false): Promise<string | undefined> => {
        let parsed: ReturnType<typeof readRpcRequest>;
        try {
          parsed = readRpcRequest(item);
        } catch (error) {
          return errorText(salvageId(item, null), error);
        }
        const text = await call(
          chain,
          parsed.id ?? null,
          parsed.method,
          parsed.params,
          request,
          account,
          inBatch,
          // The header covers the request's node reads; a send or a custody call in it is answered as without it.
          consensus !== undefined && consensusRefusal(parsed.method) === undefined ? consensus : undefined,
        );
        return parsed.id === undefined ? undefined : text;
      };
      if (!Array.isArray(body)) {
        const text = await one(body);
        if (text === undefined) return reply.code(204).send();
        return text;
      }
      const texts = (await Promise.all(body.map((item) => one(item, true)))).filter(
        (t): t is string => t !== undefined,
      );
      if (texts.length === 0) return reply.code(204).send();
      return batchAnswer(texts);
    },
  );
}

/** Above this, a batch answer is streamed part by part rather than joined into one more copy of itself. */
const STREAM_BATCH_BYTES = 1_048_576;

/**
 * A batch's answer: small ones as one string; large ones written part by part, each part let go once
 * written, so a 60 MB answer is not held twice more (the joined string and its encoding).
 */
function batchAnswer(texts: string[]): string | Readable {
  let total = 0;
  for (const text of texts) total += text.length;
  if (total < STREAM_BATCH_BYTES) return `[${texts.join(",")}]`;
  return Readable.from(
    (function* () {
      for (let i = 0; i < texts.length; i++) {
        const part = texts[i]!;
        texts[i] = "";
        yield `${i === 0 ? "[" : ","}${part}${i === texts.length - 1 ? "]" : ""}`;
      }
    })(),
    { objectMode: false },
  );
}
