/** JSON-RPC over WebSocket on GET / and /ws: every method of the table, plus eth_subscribe / eth_unsubscribe. */
import websocket from "@fastify/websocket";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import type { KeyRing } from "../auth/key-ring.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { LogQuery } from "../filters/log-query.js";
import type { ResumableSubscriptions } from "../filters/resumable-subscriptions.js";
import type { SubscriptionHub } from "../filters/subscription-hub.js";
import type { RpcDispatcher } from "../rpc/dispatcher.js";
import { errorText } from "../rpc/envelope.js";
import type { HeldSlots } from "../store/held-slots.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { ownerOf, refuse, tenantOf } from "./access-control.js";
import { problemOf } from "./problem.js";
import { SocketSession } from "./websocket-session.js";

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

export async function registerWebSocket(app: FastifyInstance, options: WebSocketOptions): Promise<void> {
  const open = openSockets(options.keys);
  await app.register(websocket, {
    options: {
      maxPayload: options.maxMessageBytes,
      // A browser that sent its key as "bearer.<key>" also offers "chaingate": that one is chosen, so
      // the key is never echoed back.
      handleProtocols: (protocols) => (protocols.has("chaingate") ? "chaingate" : false),
    },
  });
  const serve = (socket: WebSocket, request: FastifyRequest) => {
    const tenant = tenantOf(request);
    open.add(tenant, socket);
    let chain: Chain;
    try {
      chain = options.chains.select(
        (request.query as { chain_id?: unknown }).chain_id,
        request.headers["x-chain-id"],
      );
    } catch (error) {
      socket.send(errorText(null, error));
      socket.close(1008, "unknown chain");
      return;
    }
    new SocketSession(socket, chain, tenant, ownerOf(request), options).start();
  };
  for (const url of ["/", "/ws"]) {
    app.route({
      method: "GET",
      url,
      schema: { hide: true },
      // Refused before the upgrade: a tenant at its socket cap gets a 429, not a socket.
      preHandler: async (request, reply) => {
        if (request.headers.upgrade === undefined) return;
        return socketCap(request, reply, options, open);
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

interface OpenSockets {
  add(tenant: string, socket: WebSocket): void;
  count(tenant: string): number;
}

/** Each tenant's open sockets: counted against its cap, and closed when its key is revoked. */
function openSockets(keys: KeyRing): OpenSockets {
  const open = new Map<string, Set<WebSocket>>();
  keys.onChange((active) => {
    for (const [tenant, sockets] of open) {
      // A revoked key's sockets, and keyless sockets once keys are required, stop answering.
      const gone = tenant.startsWith("ip:") ? active.size > 0 : !active.has(tenant);
      if (gone) for (const socket of sockets) socket.close(1008, "API key revoked");
    }
  });
  return {
    add(tenant, socket) {
      const sockets = open.get(tenant) ?? new Set<WebSocket>();
      sockets.add(socket);
      open.set(tenant, sockets);
      socket.on("close", () => {
        sockets.delete(socket);
        if (sockets.size === 0 && open.get(tenant) === sockets) open.delete(tenant);
      });
    },
    count: (tenant) => open.get(tenant)?.size ?? 0,
  };
}

/** A tenant at its socket cap is refused (429) before the upgrade; on a shared store the cap is one count over the instances. */
async function socketCap(
  request: FastifyRequest,
  reply: FastifyReply,
  options: WebSocketOptions,
  open: OpenSockets,
): Promise<unknown> {
  const tenant = tenantOf(request);
  const cap = options.socketsPerKey;
  const refused = () =>
    refuse(request, reply, "SOCKET_LIMIT", `too many WebSocket connections: at most ${cap} per API key`, 1);
  if (options.slots?.shared(cap)) {
    const release = await options.slots.take("socket", tenant, cap);
    if (release === undefined) return refused();
    // Held until the connection closes, whether or not the upgrade completes.
    request.raw.socket.once("close", () => void release().catch(() => undefined));
    return;
  }
  if (open.count(tenant) >= (options.share ?? ((n: number) => n))(cap)) return refused();
  return;
}
