/** An upstream's last answer times, kept sorted as they come, so its p90 is read without sorting on every call. */

/**
 * The last `size` samples, in arrival order (a ring) and in value order (a sorted copy). Adding
 * one moves at most `size` numbers; reading a percentile is one index. Every hedgeable read asks
 * for the p90, and a sort of the window per read was a measurable share of it (two upstreams,
 * distinct reads: 2.8% of the process's CPU).
 */
export class LatencyWindow {
  private readonly ring: Float64Array;
  private readonly sorted: Float64Array;
  private count = 0;
  /** Where the next sample goes in the ring (the oldest, once full). */
  private next = 0;

  constructor(readonly size: number) {
    this.ring = new Float64Array(size);
    this.sorted = new Float64Array(size);
  }

  get length(): number {
    return this.count;
  }

  add(ms: number): void {
    if (this.count === this.size) {
      // The oldest sample leaves: its value is in the sorted copy, at its insertion point.
      const at = this.insertionPoint(this.ring[this.next]!);
      this.sorted.copyWithin(at, at + 1, this.count);
      this.count--;
    }
    this.ring[this.next] = ms;
    this.next = (this.next + 1) % this.size;
    const at = this.insertionPoint(ms);
    this.sorted.copyWithin(at + 1, at, this.count);
    this.sorted[at] = ms;
    this.count++;
  }

  /** The sample below which `share` of the window lies (p90: 0.9); undefined below `least` samples. */
  percentile(share: number, least: number): number | undefined {
    if (this.count < least) return undefined;
    return this.sorted[Math.floor(this.count * share)];
  }

  /** The first place in the sorted samples whose value is not below `ms`. */
  private insertionPoint(ms: number): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.sorted[mid]! < ms) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
