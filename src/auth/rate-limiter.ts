/** Token buckets per caller (API key, or address when keys are off) and method group; memory is bounded. */
import { MapHand } from "../collections/map-hand.js";

export type RateGroup = "read" | "sign" | "wallet_create" | "trace";

export interface RateLimit {
  /** Requests allowed per `perMs`; also the burst. 0 turns the group's limit off. */
  count: number;
  perMs: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Callers remembered at once (per limiter); past it the least recently seen is forgotten. */
export const MAX_BUCKETS = 100_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** The least recently seen bucket: every bucket taken from is moved to the back (see MapHand). */
  private readonly oldest = new MapHand(this.buckets);

  constructor(
    private readonly budgets: Readonly<Record<RateGroup, RateLimit>>,
    private readonly now: () => number = Date.now,
    /** This instance's share of a count (InstanceRegistry.share): the limits hold for the cluster. */
    private readonly share: (count: number) => number = (count) => count,
  ) {}

  /** Whether the group has a limit at all. */
  limits(group: RateGroup): boolean {
    return this.budgets[group].count > 0;
  }

  /** Takes one request's token; when none is left, answers how long until one is (seconds, rounded up). */
  take(subject: string, group: RateGroup): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const configured = this.budgets[group];
    if (configured.count <= 0) return { ok: true };
    const count = this.share(configured.count);
    const key = `${group}\u0000${subject}`;
    const now = this.now();
    const rate = count / configured.perMs;
    let bucket = this.buckets.get(key);
    if (bucket) {
      bucket.tokens = Math.min(count, bucket.tokens + (now - bucket.at) * rate);
      bucket.at = now;
      // Refresh its place: the oldest-used bucket is the first dropped when the map is full.
      this.buckets.delete(key);
    } else {
      bucket = { tokens: count, at: now };
      if (this.buckets.size >= MAX_BUCKETS) {
        const oldest = this.oldest.next();
        if (oldest !== undefined) this.buckets.delete(oldest[0]);
      }
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000)) };
  }
}
