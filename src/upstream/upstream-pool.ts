/** The nodes of one chain: picks a healthy one per call and fails over only on faults. */
import { type Hex, keccak256 } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { isMissingState } from "../errors/node-errors.js";
import {
  NodeRpcError,
  stateUnavailable,
  UpstreamRateLimited,
  upstreamUnavailable,
} from "../errors/rpc-errors.js";
import { asPromise } from "../lifecycle/as-promise.js";
import { CallAbort } from "./call-abort.js";
import type { TraitsOf } from "./call-traits.js";
import { HttpUpstream, type UpstreamCall } from "./http-upstream.js";
import { JsonText } from "./json-text.js";
import { LatencyWindow } from "./latency-window.js";
import { checkedResult } from "./node-methods.js";

/**
 * unverified: its chain id is not known yet (it never answered); verified: it answered our chain id;
 * quarantined: it answered another chain id. Only verified members are ever asked for data.
 */
export type UpstreamStatus = "unverified" | "verified" | "quarantined";

const NO_NAMESPACES: ReadonlySet<string> = new Set();

/** The extra namespace of a method (debug, trace, txpool), or undefined for the standard ones. */
export function extraNamespaceOf(method: string): string | undefined {
  const prefix = method.slice(0, method.indexOf("_"));
  return prefix === "debug" || prefix === "trace" || prefix === "txpool" ? prefix : undefined;
}

interface Member {
  upstream: HttpUpstream;
  /** debug, trace, txpool: what the operator marked it as serving. */
  namespaces: ReadonlySet<string>;
  status: UpstreamStatus;
  /** The chain id it last reported. */
  reportedChainId: number | undefined;
  /** After a fault it may have been replaced by another node: its chain id is asked again first. */
  recheck: boolean;
  /** Until this time (ms) the upstream is only tried when every other one failed too. */
  coolUntil: number;
  consecutiveFaults: number;
  /** Calls this upstream answered (results and node errors alike). */
  answered: number;
  faults: number;
  /** The block number this upstream last reported; undefined until its first head read. */
  head: number | undefined;
  latencyMs: number | undefined;
  /** The last calls' answer times (ms): the p90 a hedged read waits for. */
  latencies: LatencyWindow;
  /** Times this upstream was asked as the second half of a hedged read, and answered it first. */
  hedges: number;
  hedgeWins: number;
  /** Until the pool's call count reaches this, it is asked after the other in-sync members: hedges beat it often (decision 154). */
  outpacedUntil: number;
  /** Hedgeable reads it was asked first for, and those a hedge beat it on: decayed counts (about the last 64). */
  firsts: number;
  firstsLost: number;
  /** The oldest block whose state it holds, as probed or learnt from its answers (0: all it was asked, or not known). */
  oldestState: number;
}

export interface UpstreamStats {
  label: string;
  status: UpstreamStatus;
  reportedChainId: number | null;
  answered: number;
  faults: number;
  cooling: boolean;
  head: number | null;
  /** Blocks behind the best head of the pool. */
  lag: number | null;
  latencyMs: number | null;
  /** Hedged reads this upstream was asked as the second upstream, and those it answered first. */
  hedges: number;
  hedgeWins: number;
  /** The oldest block whose state it holds as far as chaingate knows (0: every block it was asked). */
  oldestState: number;
}

/** Hedged reads of a chain: off, after a fixed delay, or (`{}`) after the first upstream's observed p90. */
export type HedgePolicy = false | { readonly afterMs?: number };

/** Signed bytes anyone may broadcast: sent to every healthy upstream at once (decision 148). */
const BROADCAST = new Set(["eth_sendRawTransaction", "eth_sendRawTransactionSync"]);

/** Answer times kept per upstream for its p90. */
const LATENCY_SAMPLES = 64;
/** The wait before a hedge while an upstream has answered too few calls to know its p90. */
const HEDGE_DEFAULT_MS = 250;
/**
 * For how many of the pool's next calls a member a hedge beat is asked after its in-sync peers
 * (decision 154): counted in calls, not time, so a quiet chain does not forget sooner than a busy one.
 */
const OUTPACED_CALLS = 2_048;
/** The share of its first-asked reads a hedge must beat a member on before it is put after its peers. */
const OUTPACED_RATE = 0.05;
/** Each new first-asked read weighs this much more than the one before: about the last 64 count. */
const FIRSTS_DECAY = 63 / 64;
/** Why the slower half of a hedged read is aborted: one reason for all (its request's failure is not looked at). */
const LOST_HEDGE = new Error("the other half of a hedged read answered first");
/** No hedge sooner than this: below it a second request only doubles the load. */
const HEDGE_MIN_MS = 3;

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
const toHex = (n: number) => `0x${n.toString(16)}`;

/** A block param as a number where it names one ("0x1a", "earliest", EIP-1898's {blockNumber}); undefined for tags and hashes. */
export function blockNumberOf(param: unknown): number | undefined {
  if (param === "earliest") return 0;
  const text =
    typeof param === "object" && param !== null ? (param as { blockNumber?: unknown }).blockNumber : param;
  if (typeof text !== "string" || !/^0x[0-9a-fA-F]{1,13}$/.test(text)) return undefined;
  return Number.parseInt(text.slice(2), 16);
}

/** The share of a member's recent first-asked reads a hedge beat it on. */
const lossRate = (m: { firsts: number; firstsLost: number }) =>
  m.firsts === 0 ? 0 : m.firstsLost / m.firsts;

const COOLDOWN_MS = 2_000;
/** An upstream this many blocks behind the best one is used only when no in-sync one answers. */
export const MAX_LAG_BLOCKS = 2;
function isEmpty(result: unknown): boolean {
  if (result instanceof JsonText) return result.items === 0 && /^\s*(null|\[\s*\])\s*$/.test(result.text);
  return result === null || (Array.isArray(result) && result.length === 0);
}

/** Reports what the pool learnt about its members' chain ids (for logs). */
export type VerificationListener = (event: {
  label: string;
  status: UpstreamStatus;
  reportedChainId: number | undefined;
}) => void;

/** What the operator configured for a chain's pool beyond its URLs. */
export interface PoolOptions {
  /**
   * Each URL's chain id as the start-up probe read it; members not in it stay unverified until their
   * first answer, and are never used before it. Absent: every member is taken as verified (tests).
   */
  readonly verified?: ReadonlyMap<string, number> | undefined;
  /** The extra namespaces (debug, trace, txpool) each URL is marked for. */
  readonly namespaces?: ReadonlyMap<string, ReadonlySet<string>> | undefined;
  /** Hedged reads (decision 147): on by default where two or more upstreams exist. */
  readonly hedge?: HedgePolicy | undefined;
  /** Upstreams that must agree on what a signature or a relayed event depends on; absent: every usable one, at least 2. */
  readonly quorum?: number | undefined;
  /** Consensus reads by default (decision 150): per method, how many upstreams must agree; and what a disagreement answers. */
  readonly consensus?: ConsensusDefaults | undefined;
}

/** What answers when the upstreams of a consensus read disagree: an error naming each answer, the majority's, or the highest head's. */
export type DisagreementPolicy = "error" | "majority" | "highest_block";

export interface ConsensusDefaults {
  readonly methods: ReadonlyMap<string, number>;
  readonly onDisagreement: DisagreementPolicy;
}

export class UpstreamPool {
  private readonly members: Member[];
  private cursor = 0;
  private onVerification: VerificationListener = () => {};
  private readonly hedge: HedgePolicy;
  /** The chain's `quorum` (decision 149): how many upstreams must agree; undefined: every usable one. */
  readonly quorum: number | undefined;
  /** Consensus reads the operator asked for by default, and the chain's disagreement policy. */
  readonly consensus: ConsensusDefaults;

  constructor(
    readonly chainId: number,
    urls: readonly string[],
    timeoutMs: number,
    /** Per method: asked ahead when empty, never repeated, shared in a turn (the method table's traits). */
    private readonly traits: TraitsOf,
    options: PoolOptions = {},
  ) {
    if (urls.length === 0) throw new Error(`chain ${chainId} has no upstreams`);
    const { verified, namespaces } = options;
    this.hedge = options.hedge ?? {};
    this.quorum = options.quorum;
    this.consensus = options.consensus ?? { methods: new Map(), onDisagreement: "error" };
    const labels = new Map<string, number>();
    this.members = urls.map((url) => {
      const upstream = new HttpUpstream(url, timeoutMs, traits, chainId);
      // Two URLs on one host (different paths, i.e. different project keys) get distinct labels.
      const seen = (labels.get(upstream.label) ?? 0) + 1;
      labels.set(upstream.label, seen);
      if (seen > 1) upstream.label = `${upstream.label}#${seen}`;
      const reported = verified === undefined ? chainId : verified.get(url);
      return {
        upstream,
        namespaces: namespaces?.get(url) ?? NO_NAMESPACES,
        status: reported === undefined ? "unverified" : reported === chainId ? "verified" : "quarantined",
        reportedChainId: reported,
        recheck: false,
        coolUntil: 0,
        consecutiveFaults: 0,
        answered: 0,
        faults: 0,
        head: undefined,
        latencyMs: undefined,
        latencies: new LatencyWindow(LATENCY_SAMPLES),
        hedges: 0,
        hedgeWins: 0,
        outpacedUntil: 0,
        firsts: 0,
        firstsLost: 0,
        oldestState: 0,
      } satisfies Member;
    });
  }

  /** Called whenever a member's chain-id status changes. */
  listen(listener: VerificationListener): void {
    this.onVerification = listener;
  }

  /** Whether any member can be asked for data now (verified and not cooling). */
  get healthy(): boolean {
    const now = Date.now();
    return this.members.some((m) => this.usable(m) && m.coolUntil <= now);
  }

  private usable(m: Member): boolean {
    return m.status === "verified" && !m.recheck;
  }

  private fault(member: Member, error?: unknown): void {
    member.faults++;
    member.consecutiveFaults++;
    member.coolUntil = Date.now() + COOLDOWN_MS * Math.min(member.consecutiveFaults, 15);
    // A node that said it is rate-limiting answered as itself: cooled, but its chain id is not in doubt.
    if (!(error instanceof UpstreamRateLimited)) member.recheck = true;
  }

  /**
   * A member that had faulted answered: back into rotation, and the hedges it lost before are
   * forgotten (decision 236). A node stalls as it goes down, so those losses describe its outage,
   * not the node that answers now; kept, they would put it after its peers for 2,048 calls.
   */
  private recovered(member: Member): void {
    member.consecutiveFaults = 0;
    member.coolUntil = 0;
    member.firsts = 0;
    member.firstsLost = 0;
    member.outpacedUntil = 0;
  }

  /**
   * Asks a member that is unverified, quarantined or back from a fault for its chain id; answers
   * whether it may be used. A node swapped behind a URL for another chain's is caught here.
   */
  private async verify(member: Member): Promise<boolean> {
    if (member.status === "verified" && !member.recheck) return true;
    const result = await member.upstream.call({ method: "eth_chainId", params: [] });
    const reported = Number(BigInt(checkedResult("eth_chainId", result)));
    const status: UpstreamStatus = reported === this.chainId ? "verified" : "quarantined";
    const changed = status !== member.status || reported !== member.reportedChainId;
    member.status = status;
    member.reportedChainId = reported;
    member.recheck = false;
    if (changed) this.onVerification({ label: member.upstream.label, status, reportedChainId: reported });
    return status === "verified";
  }

  /**
   * A head an upstream pushed (WebSocket newHeads): only ever moves that upstream's head forward.
   * Answers whether the chain may learn from it (the upstream is verified).
   */
  noteHead(label: string, head: number): boolean {
    const member = this.members.find((m) => m.upstream.label === label);
    if (member && (member.head === undefined || head > member.head)) member.head = head;
    // Only a verified upstream's heads speak for the chain.
    return member !== undefined && this.usable(member);
  }

  /** The best head any upstream reported. */
  get bestHead(): number | undefined {
    let best: number | undefined;
    for (const m of this.members)
      if (m.status === "verified" && m.head !== undefined && (best === undefined || m.head > best))
        best = m.head;
    return best;
  }

  /**
   * Asks every upstream for its head at once (their health, lag and latency come from this);
   * answers the best head reported in this round, or throws when none answered.
   */
  async pollHeads(): Promise<number> {
    let best: number | undefined;
    await Promise.all(
      this.members.map(async (member) => {
        try {
          if (!(await this.verify(member))) return;
          const started = performance.now();
          const result = await member.upstream.call({ method: "eth_blockNumber", params: [] });
          member.latencyMs = performance.now() - started;
          const head = Number.parseInt(checkedResult("eth_blockNumber", result).slice(2), 16);
          if (Number.isSafeInteger(head)) {
            member.head = head;
            if (best === undefined || head > best) best = head;
          }
          // Healthy again: back into rotation at once rather than after its cooldown.
          if (member.consecutiveFaults > 0) this.recovered(member);
        } catch (error) {
          if (!(error instanceof ChaingateError) || !error.failover) return;
          this.fault(member);
        }
      }),
    );
    // Only this round's answers count: a dead node's last head says nothing about the chain now.
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
      status: m.status,
      reportedChainId: m.reportedChainId ?? null,
      answered: m.answered,
      faults: m.faults,
      cooling: m.coolUntil > now,
      head: m.head ?? null,
      lag: m.head === undefined || best === undefined ? null : best - m.head,
      latencyMs: m.latencyMs === undefined ? null : Math.round(m.latencyMs * 10) / 10,
      hedges: m.hedges,
      hedgeWins: m.hedgeWins,
      oldestState: m.oldestState,
    }));
  }

  /** Whether any upstream is marked for the method's extra namespace (always, for eth_/net_/web3_ methods). */
  serves(method: string): boolean {
    const namespace = extraNamespaceOf(method);
    return namespace === undefined || this.members.some((m) => m.namespaces.has(namespace));
  }

  /** A debug_/trace_/txpool_ call goes only to the upstreams marked for its namespace. */
  private serving(method: string, members: Member[]): Member[] {
    const namespace = extraNamespaceOf(method);
    if (namespace === undefined) return members;
    const marked = members.filter((m) => m.namespaces.has(namespace));
    if (marked.length === 0 && !this.serves(method))
      throw new ChaingateError(
        `Method not found: ${method} (no upstream of chain ${this.chainId} is marked for ${namespace}_*: \`namespaces\` in the config file)`,
        { code: "METHOD_NOT_FOUND" },
      );
    return marked;
  }

  /** In-sync healthy upstreams first (round robin), then lagging ones, cooling ones last as a final resort. */
  private order(now: number): Member[] {
    if (this.members.length === 1) return this.usable(this.members[0]!) ? this.members : [];
    const call = this.cursor++;
    const start = call % this.members.length;
    const rotated = [...this.members.slice(start), ...this.members.slice(0, start)].filter((m) =>
      this.usable(m),
    );
    const best = this.bestHead;
    const inSync = (m: Member) =>
      best === undefined || m.head === undefined || best - m.head <= MAX_LAG_BLOCKS;
    const healthy = rotated.filter((m) => m.coolUntil <= now);
    return [
      // A member a hedge lately beat is asked after its in-sync peers: a node that holds some
      // answers long (a flaky disk, a busy peer) stops setting the tail of every read it is first for.
      ...healthy.filter((m) => inSync(m) && m.outpacedUntil <= call),
      // When every peer was put back, the one hedges beat least often goes first.
      ...healthy.filter((m) => inSync(m) && m.outpacedUntil > call).sort((a, b) => lossRate(a) - lossRate(b)),
      ...healthy.filter((m) => !inSync(m)),
      ...rotated.filter((m) => m.coolUntil > now),
    ];
  }

  /**
   * The one failover loop: the members are asked in turn until one answers. A node's own answer (a
   * revert, bad params) is deterministic and ends the loop, as another node would say the same; a
   * fault cools the member and the next is asked. A send without an answer has an unknown outcome,
   * not a faulty node: the node is asked whether it has the transaction, and only a node that
   * cannot say is cooled. For a method whose empty answer may only mean the node is behind (the
   * `behind` trait), the loop goes on through the members ahead of the one that answered, and the
   * first that knows answers; what they say otherwise changes nothing, the first answer stands.
   */
  call(call: UpstreamCall): Promise<unknown> {
    // Not async: an async function that returns another's promise adopts it through a thenable
    // job, two more microtask turns and promises on every forwarded read. A throw becomes a rejection.
    return asPromise(() => this.route(call));
  }

  private route(call: UpstreamCall): Promise<unknown> {
    let members = this.serving(call.method, this.order(Date.now()));
    const traits = this.traits(call.method);
    if (BROADCAST.has(call.method) && members.length >= 2) return this.broadcast(call, members);
    const at = traits.stateAt === undefined ? undefined : blockNumberOf(call.params[traits.stateAt]);
    if (at !== undefined) {
      // Only the members not known to be pruned past the block hold its state (decision 151).
      members = members.filter((m) => m.oldestState <= at);
      if (members.length === 0) throw this.missingState(at);
    }
    if (traits.pure && !traits.behind && members.length >= 2) {
      const delay = this.hedgeDelay(members[0]!);
      if (delay !== undefined) return this.hedged(call, members, delay, at);
    }
    return at === undefined ? this.ask(call, members) : this.askAt(call, members, at);
  }

  /**
   * Signed bytes go to every healthy member at once (the cooling ones only when none is healthy):
   * the first acceptance answers, and one node's refusal does not fail a send another took. When
   * none takes it, the first node's own refusal is the answer (classified as any refusal), else
   * the last fault. A fault is judged as in the loop: a node that has the transaction took it.
   */
  private broadcast(call: UpstreamCall, members: Member[]): Promise<unknown> {
    const now = Date.now();
    const healthy = members.filter((m) => m.coolUntil <= now);
    const targets = healthy.length > 0 ? healthy : members;
    return new Promise((resolve, reject) => {
      let answered = false;
      let pending = targets.length;
      let refusal: unknown;
      let lastFault: unknown;
      const accept = (value: unknown) => {
        if (!answered) {
          answered = true;
          resolve(value);
        }
      };
      const done = () => {
        if (--pending > 0 || answered) return;
        if (refusal !== undefined) reject(refusal);
        else
          reject(
            lastFault instanceof ChaingateError
              ? lastFault
              : upstreamUnavailable("no upstream answered", lastFault),
          );
      };
      for (const member of targets) {
        member.upstream.call(call).then(
          (result) => {
            member.answered++;
            if (member.consecutiveFaults > 0) this.recovered(member);
            accept(result);
            done();
          },
          async (error: unknown) => {
            if (!(error instanceof ChaingateError) || !error.failover) {
              member.answered++;
              refusal ??= error;
            } else if (!(error instanceof UpstreamRateLimited)) {
              const outcome = await this.sendOutcome(member, call);
              if (outcome.known) accept(outcome.hash);
              else if (!outcome.alive) this.fault(member, error);
              lastFault = error;
            } else {
              this.fault(member, error);
              lastFault = error;
            }
            done();
          },
        );
      }
    });
  }

  /**
   * How a read `member` was first for ended: `lost` when a hedge beat it. A member that loses
   * often (decision 154) is asked after its in-sync peers for the pool's next calls; an occasional
   * loss, which any node's jitter gives, does not move it.
   */
  private noteFirst(member: Member, lost: boolean): void {
    member.firsts = member.firsts * FIRSTS_DECAY + 1;
    member.firstsLost = member.firstsLost * FIRSTS_DECAY + (lost ? 1 : 0);
    // Two losses among its recent first-asked reads (the decayed count of two is just under 2).
    if (lost && member.firstsLost >= 1.5 && lossRate(member) >= OUTPACED_RATE)
      member.outpacedUntil = this.cursor + OUTPACED_CALLS;
  }

  /** How long a read waits for `member` before it is also asked of the next; undefined: no hedge. */
  private hedgeDelay(member: Member): number | undefined {
    if (this.hedge === false) return undefined;
    if (this.hedge.afterMs !== undefined) return this.hedge.afterMs;
    return Math.max(HEDGE_MIN_MS, member.latencies.percentile(0.9, 8) ?? HEDGE_DEFAULT_MS);
  }

  private noteLatency(member: Member, ms: number): void {
    member.latencies.add(ms);
  }

  /**
   * A read with no effect, asked of the first member and, when it has not answered within `delay`,
   * of the second as well: the first good answer wins and the other request is aborted. A node's
   * own error answer ends it (another node would say the same); a fault asks the second at once;
   * when both fail, the rest are asked in turn. The aborted half says nothing of its node.
   */
  private hedged(call: UpstreamCall, members: Member[], delay: number, at?: number): Promise<unknown> {
    const [first, second, ...rest] = members as [Member, Member, ...Member[]];
    // Each half's abort is made when it is asked: most reads never ask the second.
    const aborts: (CallAbort | undefined)[] = [undefined, undefined];
    return new Promise((resolve, reject) => {
      let settled = false;
      let secondAsked = false;
      let hedging = false;
      let failures = 0;
      let missing = 0;
      let lastFault: unknown;
      const settle = (i: number) => {
        settled = true;
        clearTimeout(timer);
        aborts[1 - i]?.abort(LOST_HEDGE);
      };
      const attempt = (member: Member, i: number) => {
        const started = performance.now();
        const abort = new CallAbort();
        aborts[i] = abort;
        member.upstream.call({ ...call, signal: abort }).then(
          (result) => {
            if (settled) return;
            settle(i);
            member.answered++;
            if (member.consecutiveFaults > 0) this.recovered(member);
            this.noteLatency(member, performance.now() - started);
            if (i === 1 && hedging) member.hedgeWins++;
            this.noteFirst(first, i === 1 && hedging);
            resolve(result);
          },
          (error: unknown) => {
            if (settled) return;
            // A node pruned past the block is no fault, and no answer either: the other is asked.
            const pruned = at !== undefined && this.saysMissing(member, error, at);
            if (!pruned && (!(error instanceof ChaingateError) || !error.failover)) {
              settle(i);
              member.answered++;
              reject(error);
              return;
            }
            if (pruned) {
              member.answered++;
              member.oldestState = Math.max(member.oldestState, at + 1);
              missing++;
            } else {
              this.fault(member, error);
              lastFault = error;
            }
            if (++failures === 2) {
              settled = true;
              const next =
                at === undefined
                  ? this.ask(call, rest, lastFault)
                  : rest.length > 0
                    ? this.askAt(call, rest, at)
                    : Promise.reject(missing === 2 ? this.missingState(at) : lastFault);
              next.then(resolve, reject);
            } else if (i === 0) askSecond(false);
          },
        );
      };
      const askSecond = (hedge: boolean) => {
        if (settled || secondAsked) return;
        clearTimeout(timer);
        secondAsked = true;
        hedging = hedge;
        if (hedge) second.hedges++;
        attempt(second, 1);
      };
      const timer = setTimeout(() => askSecond(true), delay);
      attempt(first, 0);
    });
  }

  /**
   * A read of the state at block `at` (decision 151), asked of `holding` (the members not known to
   * be pruned past it) in turn: a member that answers it no longer holds that state is marked so
   * and the next is asked. With none left, STATE_UNAVAILABLE names each member's oldest block
   * instead of a node's raw words.
   */
  private async askAt(call: UpstreamCall, holding: Member[], at: number): Promise<unknown> {
    let pruned = 0;
    for (const [i, member] of holding.entries()) {
      try {
        return await this.ask(call, [member]);
      } catch (error) {
        if (!this.saysMissing(member, error, at)) {
          // A fault of this member was already cooled by ask: the next may answer.
          if (error instanceof ChaingateError && error.failover && i < holding.length - 1) continue;
          throw error;
        }
        member.oldestState = Math.max(member.oldestState, at + 1);
        pruned++;
      }
    }
    if (pruned === holding.length) throw this.missingState(at);
    throw upstreamUnavailable(`no upstream answered ${call.method} at block ${at}`);
  }

  private missingState(at: number): ChaingateError {
    return stateUnavailable(
      `no upstream of chain ${this.chainId} holds the state of block ${at} (${this.members
        .map((m) => `${m.upstream.label}: ${m.oldestState > 0 ? `oldest ${m.oldestState}` : "not known"}`)
        .join("; ")}); an archive upstream serves it`,
    );
  }

  /**
   * Whether `error` is `member` saying it no longer holds the state at `at`: a pruned node's
   * wording, or geth's "header not found" for a block at or below the head it reported.
   */
  private saysMissing(member: Member, error: unknown, at: number): boolean {
    if (!(error instanceof NodeRpcError)) return false;
    if (isMissingState(error.message, error.rpcCode, error.data)) return true;
    return /header not found/i.test(error.message) && member.head !== undefined && at <= member.head;
  }

  /**
   * Finds each verified member's oldest block with state (a binary search of eth_getBalance of the
   * zero address between block 0 and its head), for routing reads at old blocks before a pruned
   * node is asked. Best effort: a member that faults keeps what was known.
   */
  async probeHistory(): Promise<void> {
    await Promise.all(
      this.members.map(async (member) => {
        if (!this.usable(member) || member.head === undefined) return;
        const holds = async (block: number): Promise<boolean | undefined> => {
          try {
            await member.upstream.call({ method: "eth_getBalance", params: [ZERO_ADDRESS, toHex(block)] });
            return true;
          } catch (error) {
            return error instanceof NodeRpcError && isMissingState(error.message, error.rpcCode, error.data)
              ? false
              : undefined;
          }
        };
        const head = member.head;
        if ((await holds(0)) !== false || (await holds(head)) !== true) return;
        let low = 1;
        let high = head;
        while (low < high) {
          const mid = Math.floor((low + high) / 2);
          const found = await holds(mid);
          if (found === undefined) return;
          if (found) high = mid;
          else low = mid + 1;
        }
        member.oldestState = Math.max(member.oldestState, low);
      }),
    );
  }

  /** The plain failover loop over `members` (see `call`); `lastFault` is what was met before it. */
  private async ask(call: UpstreamCall, members: Member[], fault?: unknown): Promise<unknown> {
    const askAhead = this.traits(call.method).behind;
    let lastFault: unknown = fault;
    let first: { member: Member; result: unknown } | undefined;
    for (const member of members) {
      if (first !== undefined && !this.ahead(member, first.member)) continue;
      try {
        const started = performance.now();
        const result = await member.upstream.call(call);
        this.noteLatency(member, performance.now() - started);
        member.answered++;
        if (first !== undefined) {
          if (!isEmpty(result)) return result;
          continue;
        }
        if (member.consecutiveFaults > 0) this.recovered(member);
        if (!askAhead || !isEmpty(result) || member.head === undefined) return result;
        first = { member, result };
      } catch (error) {
        if (first !== undefined) continue;
        if (!(error instanceof ChaingateError) || !error.failover) {
          member.answered++;
          throw error;
        }
        // A node that refused to work took nothing: it is cooled like any fault, sends included.
        if (call.method === "eth_sendRawTransaction" && !(error instanceof UpstreamRateLimited)) {
          const outcome = await this.sendOutcome(member, call);
          if (outcome.known) return outcome.hash;
          if (outcome.alive) {
            member.answered++;
            lastFault = error;
            continue;
          }
        }
        this.fault(member, error);
        lastFault = error;
      }
    }
    if (first !== undefined) return first.result;
    throw lastFault instanceof ChaingateError
      ? lastFault
      : upstreamUnavailable(
          lastFault === undefined ? "no verified upstream is available" : "no upstream answered",
          lastFault,
        );
  }

  /** After a send without an answer: whether `member` answers at all, and whether it has the transaction. */
  private async sendOutcome(
    member: Member,
    call: UpstreamCall,
  ): Promise<{ known: true; hash: Hex } | { known: false; alive: boolean }> {
    const raw = call.params[0];
    if (typeof raw !== "string" || !/^0x[0-9a-fA-F]*$/.test(raw)) return { known: false, alive: false };
    const hash = keccak256(raw as Hex);
    try {
      const found = await member.upstream.call({ method: "eth_getTransactionByHash", params: [hash] });
      return found === null ? { known: false, alive: true } : { known: true, hash };
    } catch {
      return { known: false, alive: false };
    }
  }

  /** Whether `member` has seen blocks `first` has not (and is not cooling): worth asking after an empty answer. */
  private ahead(member: Member, first: Member): boolean {
    return (
      member !== first &&
      member.head !== undefined &&
      first.head !== undefined &&
      member.head > first.head &&
      member.coolUntil <= Date.now()
    );
  }

  /**
   * The members a quorum read asks (verified and not cooling), by label, and how many are configured:
   * a member that is down or cooling is not asked, and so counts against the quorum.
   */
  quorumView(): { asked: string[]; configured: number } {
    const now = Date.now();
    return {
      asked: this.members.filter((m) => this.usable(m) && m.coolUntil <= now).map((m) => m.upstream.label),
      configured: this.members.length,
    };
  }

  /**
   * The members a consensus read may ask, by label, in the order a plain read would try them
   * (in-sync healthy ones first, round robin); cooling ones are left out.
   */
  readyLabels(): string[] {
    const now = Date.now();
    return this.order(now)
      .filter((m) => m.coolUntil <= now)
      .map((m) => m.upstream.label);
  }

  /** The head an upstream last reported (for a consensus read's highest-block policy). */
  headOf(label: string): number | undefined {
    return this.members.find((m) => m.upstream.label === label)?.head;
  }

  /** Calls one named upstream (for state that lives on a node, such as a node-side filter). */
  async callOn(label: string, call: UpstreamCall): Promise<unknown> {
    const member = this.members.find((m) => m.upstream.label === label);
    if (!member) throw upstreamUnavailable(`upstream ${label} is no longer configured`);
    if (!this.usable(member)) throw upstreamUnavailable(`upstream ${label} is not verified`);
    return member.upstream.call(call);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.upstream.close()));
  }
}
