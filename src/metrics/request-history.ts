/** This instance's requests and 4xx/5xx answers over the last ten minutes, in ten-second buckets, for the console's chart. */

const BUCKET_MS = 10_000;
const BUCKETS = 60;

export interface RequestBucket {
  /** The bucket's start (ms since the epoch). */
  at: number;
  requests: number;
  errors: number;
}

/**
 * A ring of counts by ten seconds: recording is two additions and, once a bucket has passed, a reset
 * of the slot it reuses; nothing is allocated per request. The console reads it on load, so its
 * chart starts with the last ten minutes instead of empty.
 */
export class RequestHistory {
  private readonly starts = new Float64Array(BUCKETS);
  private readonly requests = new Uint32Array(BUCKETS);
  private readonly errors = new Uint32Array(BUCKETS);

  constructor(private readonly now: () => number = Date.now) {}

  /** The bucket being filled and when it ends: most requests only compare the time and add. */
  private slot = 0;
  private endsAt = 0;

  record(status: number): void {
    const now = this.now();
    if (now >= this.endsAt || now < this.endsAt - BUCKET_MS) this.enter(now);
    this.requests[this.slot]! += 1;
    if (status >= 400) this.errors[this.slot]! += 1;
  }

  private enter(now: number): void {
    const start = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    this.slot = (start / BUCKET_MS) % BUCKETS;
    this.endsAt = start + BUCKET_MS;
    if (this.starts[this.slot] !== start) {
      this.starts[this.slot] = start;
      this.requests[this.slot] = 0;
      this.errors[this.slot] = 0;
    }
  }

  /** Every bucket of the last ten minutes, oldest first, the current (partial) one last; quiet ones count zero. */
  recent(): { bucketSeconds: number; buckets: RequestBucket[] } {
    const current = Math.floor(this.now() / BUCKET_MS) * BUCKET_MS;
    const buckets: RequestBucket[] = [];
    for (let at = current - (BUCKETS - 1) * BUCKET_MS; at <= current; at += BUCKET_MS) {
      const slot = (at / BUCKET_MS) % BUCKETS;
      const kept = this.starts[slot] === at;
      buckets.push({ at, requests: kept ? this.requests[slot]! : 0, errors: kept ? this.errors[slot]! : 0 });
    }
    return { bucketSeconds: BUCKET_MS / 1000, buckets };
  }
}
