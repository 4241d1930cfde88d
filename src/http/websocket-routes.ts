/** JSON-RPC over WebSocket on GET / and /ws: every method of the table, plus eth_subscribe / eth_unsubscribe. */
import websocket from "@fastify/websocket";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import type { KeyRing } from "../auth/key-ring.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { invalidParams, invalidRequest } from "../errors/rpc-errors.js";
import type { LogCriteria } from "../filters/filter-criteria.js";
import type { LogQuery } from "../filters/log-query.js";
import type { ResumableSubscriptions } from "../filters/resumable-subscriptions.js";
import type { SubscriptionHub, SubscriptionKind } from "../filters/subscription-hub.js";
import type { RpcDispatcher } from "../rpc/dispatcher.js";
import { errorText, type RequestId, readRpcRequest, resultText, salvageId } from "../rpc/envelope.js";
import { FilterObject } from "../rpc/param-schemas.js";
import type { HeldSlots } from "../store/held-slots.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { ownerOf, refuse, tenantOf } from "./access-control.js";
import { parseJsonText } from "./json-body.js";
import { problemOf } from "./problem.js";

export interface WebSocketOptions {
  chains: ChainRegistry;
  dispatcher: RpcDispatcher;
  hub: SubscriptionHub;
  /** newHeads and logs subscriptions a client can resume on any instance. */
  resumable?: ResumableSubscriptions;
  batchLimit: number;
  maxMessageBytes: number;
  keys: KeyRing;
  /** Size checks of logs criteria. */
  logs: LogQuery;
  /** Open sockets one tenant may hold. */
  socketsPerKey: number;
  /** This instance's share of a per-key cap (the cap holds for every instance on the store). */
  share?: (cap: number) => number;
  /** On a shared store the socket cap is one count over the instances (store/held-slots.ts). */
  slots?: HeldSlots;
}

const KINDS = new Set<SubscriptionKind>(["newHeads", "logs", "newPendingTransactions"]);
const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;
const checkFilter = TypeCompiler.Compile(FilterObject);

export async function registerWebSocket(app: FastifyInstance, options: WebSocketOptions): Promise<void> {
  const { chains, dispatcher, hub, batchLimit, maxMessageBytes, keys } = options;
  /** Each tenant's open sockets: counted against its cap, and closed when its key is revoked. */
  const open = new Map<string, Set<WebSocket>>();
  keys.onChange((active) => {
    for (const [tenant, sockets] of open) {
      // A revoked key's sockets, and keyless sockets once keys are required, stop answering.
      const gone = tenant.startsWith("ip:") ? active.size > 0 : !active.has(tenant);
      if (gone) for (const socket of sockets) socket.close(1008, "API key revoked");
    }
  });
  await app.register(websocket, {
    options: {
      maxPayload: maxMessageBytes,
      // A browser that sent its key as "bearer.<key>" also offers "chaingate": that one is chosen, so
      // the key is never echoed back.
      handleProtocols: (protocols) => (protocols.has("chaingate") ? "chaingate" : false),
    },
  });

  const serve = (socket: WebSocket, request: FastifyRequest) => {
    const tenant = tenantOf(request);
    const sockets = open.get(tenant) ?? new Set<WebSocket>();
    sockets.add(socket);
    open.set(tenant, sockets);
    socket.on("close", () => {
      sockets.delete(socket);
      if (sockets.size === 0 && open.get(tenant) === sockets) open.delete(tenant);
    });
    let chain: Chain;
    try {
      chain = chains.select(
        (request.query as { chain_id?: unknown }).chain_id,
        request.headers["x-chain-id"],
      );
    } catch (error) {
      socket.send(errorText(null, error));
      socket.close(1008, "unknown chain");
      return;
    }
    const mine = new Set<string>();
    const send = (text: string) => {
      if (socket.readyState === socket.OPEN) socket.send(text);
    };

    /** `later`: run once the answers of the message being handled are sent (a resumed stream's replay). */
    const subscribe = async (params: unknown, later: (() => void)[]): Promise<string> => {
      const list = Array.isArray(params) ? params : [];
      const kind = list[0] as SubscriptionKind;
      if (!KINDS.has(kind))
        throw invalidParams(`eth_subscribe expects [newHeads | logs | newPendingTransactions, filter?]`);
      // chaingate's own options ride in the second parameter beside a logs filter's fields.
      const { resumable, resumeAfter, ...filter } = (list[1] ?? {}) as LogCriteria & {
        resumable?: unknown;
        resumeAfter?: unknown;
      };
      const criteria = filter as LogCriteria;
      if (kind === "logs" && !checkFilter.Check(criteria))
        throw invalidParams("eth_subscribe logs filter must be a filter object");
      if (kind === "logs") options.logs.checkSize(criteria);
      if (mine.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
        throw invalidRequest(`at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per connection`);
      }
      if (resumable !== undefined || resumeAfter !== undefined) {
        if (kind === "newPendingTransactions" || options.resumable === undefined)
          throw invalidParams("only newHeads and logs subscriptions are resumable");
        if (resumable !== undefined && resumable !== true) throw invalidParams("resumable must be true");
        let subscription = "";
        const resumed = await options.resumable.subscribe(
          chain,
          kind,
          criteria,
          tenant,
          resumeAfter,
          (result, cursor) =>
            send(
              JSON.stringify({
                jsonrpc: "2.0",
                method: "eth_subscription",
                params: { subscription, result, cursor },
              }),
            ),
        );
        subscription = resumed.id;
        // The replay follows the answer: a client routes notifications by the id it was answered.
        later.push(resumed.release);
        // The socket may have closed while the missed items were replayed: nothing would unsubscribe it then.
        if (socket.readyState !== socket.OPEN) {
          hub.unsubscribe(subscription);
          throw invalidRequest("the connection closed while the subscription was resumed");
        }
        mine.add(subscription);
        return subscription;
      }
      let id = "";
      id = hub.subscribe(
        chain,
        kind,
        criteria,
        (result) =>
          send(
            JSON.stringify({
              jsonrpc: "2.0",
              method: "eth_subscription",
              params: { subscription: id, result },
            }),
          ),
        tenant,
      );
      mine.add(id);
      return id;
    };

    const one = async (item: unknown, later: (() => void)[]): Promise<string | undefined> => {
      let id: RequestId | undefined;
      try {
        const call = readRpcRequest(item);
        id = call.id;
        let result: unknown;
        if (call.method === "eth_subscribe") result = await subscribe(call.params, later);
        else if (call.method === "eth_unsubscribe") {
          const target = Array.isArray(call.params) ? call.params[0] : undefined;
          if (typeof target !== "string") throw invalidParams("eth_unsubscribe expects [subscription id]");
          result = mine.delete(target.toLowerCase()) ? hub.unsubscribe(target) : false;
        } else
          result = await dispatcher.call(chain, call.method, call.params, {
            tenant,
            owner: ownerOf(request),
          });
        return id === undefined ? undefined : resultText(id, result);
      } catch (error) {
        return errorText(id ?? salvageId(item, null), error);
      }
    };

    socket.on("message", (data: Buffer) => {
      void (async () => {
        let body: unknown;
        try {
          body = parseJsonText(data.toString("utf8"));
          if (Array.isArray(body)) {
            if (body.length === 0) throw invalidRequest("a batch must not be empty");
            if (body.length > batchLimit) throw invalidRequest(`a batch holds at most ${batchLimit} calls`);
          }
        } catch (error) {
          send(errorText(null, error));
          return;
        }
        const later: (() => void)[] = [];
        if (!Array.isArray(body)) {
          const text = await one(body, later);
          if (text !== undefined) send(text);
        } else {
          const answers = (await Promise.all(body.map((item) => one(item, later)))).filter(
            (t): t is string => t !== undefined,
          );
          if (answers.length > 0) send(`[${answers.join(",")}]`);
        }
        for (const release of later) release();
      })();
    });
    socket.on("close", () => {
      for (const id of mine) hub.unsubscribe(id);
      mine.clear();
    });
  };

  for (const url of ["/", "/ws"]) {
    app.route({
      method: "GET",
      url,
      schema: { hide: true },
      // Refused before the upgrade: a tenant at its socket cap gets a 429, not a socket.
      preHandler: async (request, reply) => {
        if (request.headers.upgrade === undefined) return;
        const tenant = tenantOf(request);
        const cap = options.socketsPerKey;
        const refused = () =>
          refuse(
            request,
            reply,
            "SOCKET_LIMIT",
            `too many WebSocket connections: at most ${cap} per API key`,
            1,
          );
        if (options.slots?.shared(cap)) {
          const release = await options.slots.take("socket", tenant, cap);
          if (release === undefined) return refused();
          // Held until the connection closes, whether or not the upgrade completes.
          request.raw.socket.once("close", () => void release().catch(() => undefined));
          return;
        }
        const held = open.get(tenant)?.size ?? 0;
        if (held >= (options.share ?? ((n: number) => n))(cap)) return refused();
      },
      handler: async (_request, reply) =>
        reply
          .code(426)
          .type("application/problem+json")
          .send(
            problemOf(
              new ChaingateError(
                "GET / is the JSON-RPC WebSocket endpoint; send POST / for HTTP JSON-RPC, or see /docs",
                { code: "UPGRADE_REQUIRED" },
              ),
            ),
          ),
      wsHandler: serve,
    });
  }
}
