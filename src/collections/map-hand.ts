/** A kept position in a Map's insertion order: its oldest entry found without walking slots V8 has emptied. */

/**
 * V8 leaves a deleted Map entry's slot in place until it next compacts the table, and a fresh
 * iterator steps over every such slot before the first live entry. A bounded map that drops its
 * oldest entry through `map.keys().next()` (or a walk from the start) on every insert therefore
 * pays for every slot emptied since the last compaction: 20-115 µs an insert in maps of 100,000
 * entries (#17: the response cache, the rate limiter's buckets). A Map iterator stays valid while
 * the map changes, so one kept between calls goes on from where it stopped; entries moved to the
 * back (deleted and set again) are met again there.
 *
 * `next()` is the map's oldest entry as long as the owner removes or moves to the back every
 * entry it is given (so nothing is left behind the hand).
 */
export class MapHand<K, V> {
  private iterator: Iterator<[K, V]> | undefined;
  /** The entry `peek` looked at and `next` has not yet given. */
  private peeked: [K, V] | undefined;

  constructor(private readonly map: Map<K, V>) {}

  /**
   * The entry `next` will give, without moving on (to choose between the hands of several maps).
   * It is read when peeked: one changed or dropped since is given as it was then.
   */
  peek(): [K, V] | undefined {
    this.peeked ??= this.step();
    return this.peeked;
  }

  /** The next entry in insertion order; after the newest, the oldest again; undefined when empty. */
  next(): [K, V] | undefined {
    const peeked = this.peeked;
    if (peeked === undefined) return this.step();
    this.peeked = undefined;
    return peeked;
  }

  private step(): [K, V] | undefined {
    let step = this.iterator?.next();
    // A finished Map iterator stays finished, even when entries are added later.
    if (step === undefined || step.done) {
      this.iterator = this.map.entries();
      step = this.iterator.next();
    }
    return step.done ? undefined : step.value;
  }

  /** Starts over from the oldest entry (after the map was cleared). */
  reset(): void {
    this.iterator = undefined;
    this.peeked = undefined;
  }
}
