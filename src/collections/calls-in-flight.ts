/** Calls in flight by key, in a hash table of our own: a Map that gains and loses an entry a call kept every call alive until a full collection (decision 246). */

/** One call in flight: its key, what it answers, its bucket and the next call there. `add` answers it, `remove` takes it: by identity, its key not read again. */
export interface InFlight<T> {
  readonly key: string;
  readonly value: T;
  readonly bucket: number;
  next: InFlight<T> | undefined;
}

/** Buckets of the table (a power of two): far more than calls a process has in flight at once. */
const BUCKETS = 4096;

/** Characters of a long key read for its bucket (spread over the whole key; equal keys are still compared whole). */
const HASHED_CHARACTERS = 128;

/**
 * A key's bucket: FNV-1a over its length and up to HASHED_CHARACTERS of its characters, taken at
 * an even step across the key. Two keys that share a bucket cost a string comparison, never a
 * wrong answer.
 */
function bucketOf(key: string): number {
  const length = key.length;
  const step = length <= HASHED_CHARACTERS ? 1 : Math.ceil(length / HASHED_CHARACTERS);
  let hash = Math.imul(0x811c9dc5 ^ length, 0x01000193);
  for (let i = length - 1; i >= 0; i -= step) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash ^ (hash >>> 15)) & (BUCKETS - 1);
}

/**
 * What a Map<string, T> is to a set of calls coalesced while in flight (one `set` when a call
 * starts, one `delete` when it settles), without V8's Map underneath. Such a Map rehashes every
 * few dozen calls; once its table has been promoted, V8 makes every later table in the old
 * generation too, and each table a rehash leaves behind keeps the entries it held (for any
 * iterator still on it) until the next full collection. Every forwarded read's key, promise and
 * answer was promoted that way: 156 KB a scavenge against 46 KB without the Map (the minimal
 * forwarder: 38 KB), and a mark-compact every 4 s instead of every 6 (decision 246). Here a
 * bucket's slot is cleared when its call settles, so a call's objects die young.
 */
export class CallsInFlight<T> {
  private readonly buckets: (InFlight<T> | undefined)[] = new Array<InFlight<T> | undefined>(BUCKETS).fill(
    undefined,
  );
  private count = 0;

  /** Calls in flight. */
  get size(): number {
    return this.count;
  }

  /** Where `key`'s call is kept: read once, for `get` and then `add`. */
  bucketOf(key: string): number {
    return bucketOf(key);
  }

  /** The call in flight under `key` (`bucket` is `bucketOf(key)`). */
  get(bucket: number, key: string): T | undefined {
    for (let call = this.buckets[bucket]; call !== undefined; call = call.next)
      if (call.key === key) return call.value;
    return undefined;
  }

  /**
   * Adds a call under `key` (`bucket` is `bucketOf(key)`), where `get` found none, as a Map's `set`
   * of a new key; answers the entry `remove` takes when it settles.
   */
  add(bucket: number, key: string, value: T): InFlight<T> {
    const call: InFlight<T> = { key, value, bucket, next: this.buckets[bucket] };
    this.buckets[bucket] = call;
    this.count++;
    return call;
  }

  /** Removes a call `add` answered; removing it again does nothing. */
  remove(handle: InFlight<T>): void {
    const { bucket } = handle;
    let before: InFlight<T> | undefined;
    for (let call = this.buckets[bucket]; call !== undefined; before = call, call = call.next) {
      if (call !== handle) continue;
      if (before === undefined) this.buckets[bucket] = call.next;
      else before.next = call.next;
      // A call that ran long enough to be promoted would otherwise keep younger calls alive.
      call.next = undefined;
      this.count--;
      return;
    }
  }
}
