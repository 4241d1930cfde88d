/** One WebSocket connection: its JSON-RPC messages (single or batch) answered in order, and the subscriptions it holds. */
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { WebSocket } from "ws";
import { invalidParams, invalidRequest } from "../errors/rpc-errors.js";
import type { LogCriteria } from "../filters/filter-criteria.js";
import type { LogQuery } from "../filters/log-query.js";
import type { ResumableSubscriptions } from "../filters/resumable-subscriptions.js";
import type { SubscriptionHub, SubscriptionKind } from "../filters/subscription-hub.js";
import type { RpcDispatcher } from "../rpc/dispatcher.js";
import { errorText, type RequestId, readRpcRequest, resultText, salvageId } from "../rpc/envelope.js";
import { FilterObject } from "../rpc/param-schemas.js";
import type { Chain } from "../upstream/chain-registry.js";
import { parseJsonText } from "./json-body.js";

const KINDS = new Set<SubscriptionKind>(["newHeads", "logs", "newPendingTransactions"]);
const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;
const checkFilter = TypeCompiler.Compile(FilterObject);

export interface SessionServices {
  dispatcher: RpcDispatcher;
  hub: SubscriptionHub;
  resumable?: ResumableSubscriptions;
  /** Size checks of logs criteria. */
  logs: LogQuery;
  batchLimit: number;
}

/** Work to run once the answers of the message being handled are sent (a resumed stream's replay). */
type Later = (() => void)[];

export class SocketSession {
  /** The subscriptions this connection holds: ended when it closes. */
  private readonly mine = new Set<string>();
  /** Resumes under way (a resume may wait seconds for its stream's record, decision 237): they count against the cap too. */
  private resuming = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly chain: Chain,
    private readonly tenant: string,
    private readonly owner: string | null,
    private readonly services: SessionServices,
  ) {}

  start(): void {
    this.socket.on("message", (data: Buffer) => void this.onMessage(data));
    this.socket.on("close", () => {
      for (const id of this.mine) this.services.hub.unsubscribe(id);
      this.mine.clear();
    });
  }

  /** Whether `text` went out: not once the socket is closing (a close frame came or was sent). */
  private send(text: string): boolean {
    if (this.socket.readyState !== this.socket.OPEN) return false;
    this.socket.send(text);
    return true;
  }

  private async onMessage(data: Buffer): Promise<void> {
    const { batchLimit } = this.services;
    let body: unknown;
    try {
      body = parseJsonText(data.toString("utf8"));
      if (Array.isArray(body)) {
        if (body.length === 0) throw invalidRequest("a batch must not be empty");
        if (body.length > batchLimit) throw invalidRequest(`a batch holds at most ${batchLimit} calls`);
      }
    } catch (error) {
      this.send(errorText(null, error));
      return;
    }
    const later: Later = [];
    if (!Array.isArray(body)) {
      const text = await this.one(body, later);
      if (text !== undefined) this.send(text);
    } else {
      const answers = (await Promise.all(body.map((item) => this.one(item, later)))).filter(
        (t): t is string => t !== undefined,
      );
      if (answers.length > 0) this.send(`[${answers.join(",")}]`);
    }
    for (const release of later) release();
  }

  /** One call's answer text (undefined for a notification); never throws. */
  private async one(item: unknown, later: Later): Promise<string | undefined> {
    let id: RequestId | undefined;
    try {
      const call = readRpcRequest(item);
      id = call.id;
      let result: unknown;
      if (call.method === "eth_subscribe") result = await this.subscribe(call.params, later);
      else if (call.method === "eth_unsubscribe") result = this.unsubscribe(call.params);
      else
        result = await this.services.dispatcher.call(this.chain, call.method, call.params, {
          tenant: this.tenant,
          owner: this.owner,
        });
      return id === undefined ? undefined : resultText(id, result);
    } catch (error) {
      return errorText(id ?? salvageId(item, null), error);
    }
  }

  private unsubscribe(params: unknown): boolean {
    const target = Array.isArray(params) ? params[0] : undefined;
    if (typeof target !== "string") throw invalidParams("eth_unsubscribe expects [subscription id]");
    return this.mine.delete(target.toLowerCase()) ? this.services.hub.unsubscribe(target) : false;
  }

  private async subscribe(params: unknown, later: Later): Promise<string> {
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
    if (kind === "logs") this.services.logs.checkSize(criteria);
    if (this.mine.size + this.resuming >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
      throw invalidRequest(`at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per connection`);
    }
    if (resumable !== undefined || resumeAfter !== undefined) {
      if (kind === "newPendingTransactions" || this.services.resumable === undefined)
        throw invalidParams("only newHeads and logs subscriptions are resumable");
      if (resumable !== undefined && resumable !== true) throw invalidParams("resumable must be true");
      this.resuming++;
      try {
        return await this.resume(kind, criteria, resumeAfter, later);
      } finally {
        this.resuming--;
      }
    }
    let id = "";
    id = this.services.hub.subscribe(
      this.chain,
      kind,
      criteria,
      (result) =>
        this.send(
          JSON.stringify({
            jsonrpc: "2.0",
            method: "eth_subscription",
            params: { subscription: id, result },
          }),
        ),
      this.tenant,
    );
    this.mine.add(id);
    return id;
  }

  /** A resumable newHeads or logs subscription: what was missed after `resumeAfter` is replayed once the answer is sent. */
  private async resume(
    kind: "newHeads" | "logs",
    criteria: LogCriteria,
    resumeAfter: unknown,
    later: Later,
  ): Promise<string> {
    const resumable = this.services.resumable;
    if (resumable === undefined) throw invalidParams("only newHeads and logs subscriptions are resumable");
    let subscription = "";
    const resumed = await resumable.subscribe(
      this.chain,
      kind,
      criteria,
      this.tenant,
      resumeAfter,
      (result, cursor) =>
        this.send(
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
    if (this.socket.readyState !== this.socket.OPEN) {
      this.services.hub.unsubscribe(subscription);
      throw invalidRequest("the connection closed while the subscription was resumed");
    }
    this.mine.add(subscription);
    return subscription;
  }
}
