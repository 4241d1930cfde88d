/** The nodes of one chain: picks a healthy one per call and fails over only on faults. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { upstreamUnavailable } from "../rpc/rpc-errors.js";
import { HttpUpstream, type UpstreamCall } from "./http-upstream.js";

interface Member {
  upstream: HttpUpstream;
  /** Until this time (ms) the upstream is only tried when every other one failed too. */
  coolUntil: number;
  consecutiveFaults: number;
  /** Calls this upstream answered (results and node errors alike). */
  answered: number;
  faults: number;
  /** The block number this upstream last reported; undefined until its first head read. */
  head: number | undefined;
  latencyMs: number | undefined;
}

export interface UpstreamStats {
  label: string;
  answered: number;
  faults: number;
  cooling: boolean;
  head: number | null;
  /** Blocks behind the best head of the pool. */
  lag: number | null;
  latencyMs: number | null;
}

const COOLDOWN_MS = 2_000;
/** An upstream this many blocks behind the best one is used only when no in-sync one answers. */
export const MAX_LAG_BLOCKS = 2;
/** Answers that are null (or empty) when the node has not seen the block yet: asked again elsewhere. */
const NULL_WHEN_BEHIND = new Set([
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getUncleCountByBlockHash",
  "eth_getLogs",
]);

function isEmpty(result: unknown): boolean {
  return result === null || (Array.isArray(result) && result.length === 0);
}

export class UpstreamPool {
  private readonly members: Member[];
  private cursor = 0;

  constructor(
    readonly chainId: number,
    urls: readonly string[],
    timeoutMs: number,
  ) {
    if (urls.length === 0) throw new Error(`chain ${chainId} has no upstreams`);
    this.members = urls.map((url) => ({
      upstream: new HttpUpstream(url, timeoutMs),
      coolUntil: 0,
      consecutiveFaults: 0,
      answered: 0,
      faults: 0,
      head: undefined,
      latencyMs: undefined,
    }));
  }

  /** A head an upstream pushed (WebSocket newHeads): only ever moves that upstream's head forward. */
  noteHead(label: string, head: number): void {
    const member = this.members.find((m) => m.upstream.label === label);
    if (member && (member.head === undefined || head > member.head)) member.head = head;
  }

  /** The best head any upstream reported. */
  get bestHead(): number | undefined {
    let best: number | undefined;
    for (const m of this.members)
      if (m.head !== undefined && (best === undefined || m.head > best)) best = m.head;
    return best;
  }

  /**
   * Asks every upstream for its head at once (their health, lag and latency come from this);
   * answers the best head, or throws when none answered.
   */
  async pollHeads(): Promise<number> {
    await Promise.all(
      this.members.map(async (member) => {
        const started = performance.now();
        try {
          const result = await member.upstream.call({ method: "eth_blockNumber", params: [] });
          member.latencyMs = performance.now() - started;
          const head = Number.parseInt(String(result).slice(2), 16);
          if (Number.isSafeInteger(head)) member.head = head;
          if (member.coolUntil > Date.now() && member.consecutiveFaults > 0) {
            // Healthy again: back into rotation at once rather than after its cooldown.
            member.coolUntil = 0;
            member.consecutiveFaults = 0;
          }
        } catch (error) {
          if (!(error instanceof ChaingateError) || !error.retryable) return;
          member.faults++;
          member.consecutiveFaults++;
          member.coolUntil = Date.now() + COOLDOWN_MS * Math.min(member.consecutiveFaults, 15);
        }
      }),
    );
    const best = this.bestHead;
    if (best === undefined) throw upstreamUnavailable("no upstream reported a head");
    return best;
  }

  get upstreams(): readonly HttpUpstream[] {
    return this.members.map((m) => m.upstream);
  }

  stats(): UpstreamStats[] {
    const now = Date.now();
    const best = this.bestHead;
    return this.members.map((m) => ({
      label: m.upstream.label,
      answered: m.answered,
      faults: m.faults,
      cooling: m.coolUntil > now,
      head: m.head ?? null,
      lag: m.head === undefined || best === undefined ? null : best - m.head,
      latencyMs: m.latencyMs === undefined ? null : Math.round(m.latencyMs * 10) / 10,
    }));
  }

  /** In-sync healthy upstreams first (round robin), then lagging ones, cooling ones last as a final resort. */
  private order(now: number): Member[] {
    if (this.members.length === 1) return this.members;
    const start = this.cursor++ % this.members.length;
    const rotated = [...this.members.slice(start), ...this.members.slice(0, start)];
    const best = this.bestHead;
    const inSync = (m: Member) =>
      best === undefined || m.head === undefined || best - m.head <= MAX_LAG_BLOCKS;
    const healthy = rotated.filter((m) => m.coolUntil <= now);
    return [
      ...healthy.filter(inSync),
      ...healthy.filter((m) => !inSync(m)),
      ...rotated.filter((m) => m.coolUntil > now),
    ];
  }

  async call(call: UpstreamCall): Promise<unknown> {
    let lastFault: unknown;
    for (const member of this.order(Date.now())) {
      try {
        const result = await member.upstream.call(call);
        member.answered++;
        member.consecutiveFaults = 0;
        member.coolUntil = 0;
        if (isEmpty(result) && NULL_WHEN_BEHIND.has(call.method)) return this.askAhead(member, call, result);
        return result;
      } catch (error) {
        // A node's answer (revert, bad params) is deterministic: another node would say the same.
        if (!(error instanceof ChaingateError) || !error.retryable) {
          member.answered++;
          throw error;
        }
        member.faults++;
        member.consecutiveFaults++;
        member.coolUntil = Date.now() + COOLDOWN_MS * Math.min(member.consecutiveFaults, 15);
        lastFault = error;
      }
    }
    throw lastFault instanceof ChaingateError
      ? lastFault
      : upstreamUnavailable("no upstream answered", lastFault);
  }

  /**
   * "Not found" from a node that is behind may only mean it has not seen the block yet: ask the
   * upstreams that are ahead of it, and answer the first that knows; otherwise the first answer.
   */
  private async askAhead(first: Member, call: UpstreamCall, firstResult: unknown): Promise<unknown> {
    if (first.head === undefined) return firstResult;
    const ahead = this.members.filter(
      (m) => m !== first && m.head !== undefined && m.head > first.head! && m.coolUntil <= Date.now(),
    );
    for (const member of ahead) {
      try {
        const result = await member.upstream.call(call);
        member.answered++;
        if (!isEmpty(result)) return result;
      } catch {
        // A fault or an answer from the one asked second changes nothing: the first answer stands.
      }
    }
    return firstResult;
  }

  /** Calls one named upstream (for state that lives on a node, such as a node-side filter). */
  async callOn(label: string, call: UpstreamCall): Promise<unknown> {
    const member = this.members.find((m) => m.upstream.label === label);
    if (!member) throw upstreamUnavailable(`upstream ${label} is no longer configured`);
    return member.upstream.call(call);
  }

  /** Calls whichever upstream answers, and says which one did. */
  async callAny(call: UpstreamCall): Promise<{ label: string; result: unknown }> {
    let lastFault: unknown;
    for (const member of this.order(Date.now())) {
      try {
        return { label: member.upstream.label, result: await member.upstream.call(call) };
      } catch (error) {
        if (!(error instanceof ChaingateError) || !error.retryable) throw error;
        lastFault = error;
      }
    }
    throw lastFault instanceof ChaingateError
      ? lastFault
      : upstreamUnavailable("no upstream answered", lastFault);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.upstream.close()));
  }
}
