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
}

export interface UpstreamStats {
  label: string;
  answered: number;
  faults: number;
  cooling: boolean;
}

const COOLDOWN_MS = 2_000;

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
    }));
  }

  get upstreams(): readonly HttpUpstream[] {
    return this.members.map((m) => m.upstream);
  }

  stats(): UpstreamStats[] {
    const now = Date.now();
    return this.members.map((m) => ({
      label: m.upstream.label,
      answered: m.answered,
      faults: m.faults,
      cooling: m.coolUntil > now,
    }));
  }

  /** Healthy upstreams first (round robin among them), cooling ones last as a final resort. */
  private order(now: number): Member[] {
    const start = this.cursor++ % this.members.length;
    const rotated = [...this.members.slice(start), ...this.members.slice(0, start)];
    return [...rotated.filter((m) => m.coolUntil <= now), ...rotated.filter((m) => m.coolUntil > now)];
  }

  async call(call: UpstreamCall): Promise<unknown> {
    let lastFault: unknown;
    for (const member of this.order(Date.now())) {
      try {
        const result = await member.upstream.call(call);
        member.answered++;
        member.consecutiveFaults = 0;
        member.coolUntil = 0;
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
