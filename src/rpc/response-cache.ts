/** Finality-aware answers cache with in-flight coalescing; answers are kept as JSON text, ready to send. */

import { CallsInFlight } from "../collections/calls-in-flight.js";
import { MapHand } from "../collections/map-hand.js";
import { asPromise } from "../lifecycle/as-promise.js";
import { JsonText } from "../upstream/json-text.js";
import type { MethodSpec } from "./method-spec.js";

export { JsonText };

/** A node's answer text that says null ("not found"), whatever its spacing. */
const NULL_TEXT = /^\s*null\s*$/;

/** Where a call's answer is kept, whatever the head (see `ResponseCache.place`). */
export interface CachePlace {
  readonly chainId: number;
  readonly key: string;
  /** The parameters as JSON text, written once for the key: a miss sends them to the node as they are. */
  readonly paramsText: string;
}

/** A call's place in the cache at one head (see `ResponseCache.slot`). */
export interface Slot {
  readonly chainId: number;
  readonly key: string;
  readonly lifetime: "forever" | "head" | "never";
  /** The head the lookup was made at: an answer fetched for it is kept against it. */
  readonly head: number | undefined;
  /** The answer valid at that head, when the cache holds one (no hit counted yet). */
  readonly hit: JsonText | undefined;
  /** The parameters as JSON text, written once for the key: a miss sends them to the node as they are. */
  readonly paramsText: string;
}

/**
 * A kept answer: the answer itself (a hit hands it out as it is) and what the cache keeps about
 * it, in one object rather than an entry holding a JsonText (one object fewer a kept answer,
 * decision 233). It names nothing of its shelf: an answer still being written after its shelf
 * was dropped would otherwise keep that shelf's every answer alive with it.
 */
class Entry extends JsonText {
  /** Read since it was stored or last spared: eviction passes over it once (second chance). */
  used = false;
  /** Replaced by a newer answer for its key: a hand that peeked at it passes over it. */
  replaced = false;

  constructor(
    json: JsonText,
    /** When it was kept or last spared, by the cache's clock: the oldest of all shelves goes first. */
    public order: number,
  ) {
    super(json.text, json.items, json.byteLength);
  }
}

/**
 * Answers kept together, in the order they were kept, with the CLOCK hand that evicts them and the
 * bytes they count: the answers that never change, and each chain's answers for its current head.
 * A head's answers on a shelf of their own go all at once when the chain's head moves on (dropping
 * the shelf), where in one map with the others each had to be found and deleted: 11-14 ms of the
 * event loop at every new block for a full 32 MiB cache of balances (decision 244).
 */
class Shelf {
  readonly entries = new Map<string, Entry>();
  readonly hand = new MapHand(this.entries);
  bytes = 0;

  /** The head its answers were read at; undefined for the shelf of answers that never change. */
  constructor(readonly head: number | undefined) {}
}

/**
 * What an entry holds besides its key's and answer's characters: the map's slot, the entry, the
 * strings' headers and the key's concatenation. Measured with V8 (Node 20) on balances read from
 * a node's bytes as the upstream reads them: 461-463 bytes of heap an entry, of which 93 are
 * characters (decision 244; 490-495, counted with 400, while each head's answers also had their
 * keys in a set; a count of 336 before decision 233, from answers that were not slices of a node's
 * answer, let such a cache hold 1.44 times its budget). Without it a cache of small answers held
 * 4.6 times its budget (#17: 419,430 entries, RSS past 380 MB, under distinct reads with the
 * default 32 MiB).
 */
export const ENTRY_OVERHEAD_BYTES = 370;

/** Heap an entry is counted as: one byte a character (V8 keeps ASCII strings one byte wide) and the overhead. */
function entryCost(key: string, json: JsonText): number {
  return key.length + json.text.length + ENTRY_OVERHEAD_BYTES;
}

/** Blocks behind the head after which a block's contents are treated as final for caching. */
const FINALITY_DEPTH = 64;

export class ResponseCache {
  /** The answers that never change (kept "forever"), of every chain. */
  private readonly forever = new Shelf(undefined);
  /** Calls to a node under way, by key: an identical call joins one (not a Map: see CallsInFlight). */
  private readonly inFlight = new CallsInFlight<Promise<JsonText>>();
  /** What every shelf counts together, against `maxBytes`. */
  private bytes = 0;
  /** Per chain, the answers kept for its newest head seen here. */
  private readonly heads = new Map<number, Shelf>();
  /** The forever shelf and every chain's head shelf: those eviction chooses from. */
  private shelves: Shelf[] = [this.forever];
  /** Counts keeps and spares: an entry's `order` (see Entry). */
  private clock = 0;
  /** Lookups answered from the cache, and those that went to a node (metrics). */
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): number {
    let size = 0;
    for (const shelf of this.shelves) size += shelf.entries.size;
    return size;
  }

  /** Forgets every answer: a chain that went back (a restarted node, a deep reorg) may differ anywhere. */
  clear(): void {
    this.forever.entries.clear();
    this.forever.hand.reset();
    this.forever.bytes = 0;
    this.heads.clear();
    this.shelves = [this.forever];
    this.bytes = 0;
  }

  /** How long an answer may be reused: "forever", "head" (this block only) or "never". */
  private lifetime(
    spec: MethodSpec,
    params: readonly unknown[],
    head: number | undefined,
  ): "forever" | "head" | "never" {
    switch (spec.cache) {
      case "static":
      case "immutable":
        return "forever";
      case "head":
        return head === undefined ? "never" : "head";
      case "block": {
        const index = spec.params.findIndex((p) => p.name === "block" || p.name === "newestBlock");
        const blockParam = index < 0 ? undefined : blockOf(params[index]);
        if (blockParam === undefined) return "never";
        if (blockParam.kind === "hash") return "forever";
        if (blockParam.kind === "tag") {
          if (blockParam.tag === "pending") return "never";
          if (blockParam.tag === "earliest") return "forever";
          return head === undefined ? "never" : "head";
        }
        if (head === undefined) return "never";
        if (blockParam.number <= head - FINALITY_DEPTH) return "forever";
        return blockParam.number <= head ? "head" : "never";
      }
      default:
        return "never";
    }
  }

  /** Where a call's answer is kept, whatever the head: its key, written once (see `slotAt`). */
  place(chainId: number, spec: MethodSpec, params: readonly unknown[]): CachePlace {
    const paramsText = JSON.stringify(params);
    return { chainId, key: `${chainId}|${spec.name}|${paramsText}`, paramsText };
  }

  /**
   * Where a call's answer is kept, and the answer when one is valid at `head` (nothing is fetched,
   * no hit counted): the key and the lifetime are worked out once for a lookup and the fetch that
   * may follow it.
   */
  slot(chainId: number, head: number | undefined, spec: MethodSpec, params: readonly unknown[]): Slot {
    return this.slotAt(head, spec, params, this.place(chainId, spec, params));
  }

  /** `slot` with the call's place already known (`place` of the same chain, method and parameters). */
  slotAt(head: number | undefined, spec: MethodSpec, params: readonly unknown[], place: CachePlace): Slot {
    const lifetime = this.lifetime(spec, params, head);
    const hit = lifetime === "never" ? undefined : this.fresh(place, lifetime === "head" ? head : undefined);
    return { chainId: place.chainId, key: place.key, lifetime, head, hit, paramsText: place.paramsText };
  }

  /** The answer kept for `place` at `head` (undefined: one that never changes). */
  private fresh(place: CachePlace, head: number | undefined): JsonText | undefined {
    const shelf = head === undefined ? this.forever : this.heads.get(place.chainId);
    if (shelf === undefined || shelf.head !== head) return undefined;
    const hit = shelf.entries.get(place.key);
    if (!hit) return undefined;
    // A flag, not a move to the back: re-inserting on every hit churned a map of tens of thousands
    // of entries (rehashes, a fresh key string kept per hit) and halved the hit rate once full (#17).
    hit.used = true;
    return hit;
  }

  /** Answers from the cache, joins an identical call in flight, or runs `fetch` once for all. */
  get(
    chainId: number,
    head: number | undefined,
    spec: MethodSpec,
    params: readonly unknown[],
    fetch: () => Promise<unknown>,
  ): Promise<JsonText> {
    const slot = this.slot(chainId, head, spec, params);
    if (slot.hit !== undefined) {
      this.hits++;
      return Promise.resolve(slot.hit);
    }
    return this.fill(slot, fetch);
  }

  /**
   * The answer for a slot that held none (see `slot`): joins an identical call in flight, or runs
   * `fetch` once for all and keeps what it answers as long as the slot's lifetime allows.
   */
  fill(slot: Slot, fetch: () => Promise<unknown>): Promise<JsonText> {
    const { chainId, key, lifetime, head } = slot;
    const bucket = this.inFlight.bucketOf(key);
    const pending = this.inFlight.get(bucket, key);
    if (pending) return pending;
    this.misses++;
    const fetched = asPromise(fetch);
    // Coalescing only: the entry is dropped when the call settles, whatever the outcome (the
    // caller is handed `run` itself and handles its failure); in the same step, not a second
    // promise hung on `run` (one fewer on every forwarded read).
    const run = fetched.then(
      (result) => {
        this.inFlight.remove(call);
        const json = result instanceof JsonText ? result : new JsonText(JSON.stringify(result ?? null));
        // A null "not found" may become found later (a transaction about to be mined): never kept.
        const found =
          result instanceof JsonText ? !NULL_TEXT.test(result.text) : result !== null && result !== undefined;
        // The kept entry when there is one: its UTF-8 length, counted once, serves this answer too.
        if (lifetime !== "never" && found)
          return this.store(chainId, key, json, lifetime === "head" ? head : undefined);
        return json;
      },
      (error: unknown) => {
        this.inFlight.remove(call);
        throw error;
      },
    );
    const call = this.inFlight.add(bucket, key, run);
    return run;
  }

  /** Keeps `json` for `key` when it fits and its head is current; answers the kept entry, else `json`. */
  private store(chainId: number, key: string, json: JsonText, head: number | undefined): JsonText {
    // Larger than the whole budget: never kept.
    const cost = entryCost(key, json);
    if (cost > this.maxBytes) return json;
    const shelf = head === undefined ? this.forever : this.shelfAt(chainId, head);
    // Read at a head the chain has since left: no lookup will be made at it again.
    if (shelf === undefined) return json;
    const old = shelf.entries.get(key);
    if (old) {
      // To the back as a new answer; a hand that peeked at the old one passes over it.
      shelf.entries.delete(key);
      old.replaced = true;
      this.drop(shelf, key, old);
    }
    const entry = new Entry(json, ++this.clock);
    shelf.entries.set(key, entry);
    shelf.bytes += cost;
    this.bytes += cost;
    this.evictFor(entry);
    return entry;
  }

  /**
   * Evicts until the budget holds, oldest first over every shelf (each shelf keeps its answers in
   * the order they were kept, and each hand's next answer is compared by `order`); an entry read
   * since it was kept or last spared goes to the back of its shelf instead, once (the CLOCK
   * approximation of least recently used), and so does `kept`, the answer just stored, should it
   * be the oldest left. Every entry is passed at most twice (spared, then dropped), so the walk is
   * bounded.
   */
  private evictFor(kept: Entry): void {
    for (let steps = 2 * this.size + 2; this.bytes > this.maxBytes && steps > 0; steps--) {
      let shelf: Shelf | undefined;
      let oldest: [string, Entry] | undefined;
      for (const candidate of this.shelves) {
        const next = this.offered(candidate);
        if (next !== undefined && (oldest === undefined || next[1].order < oldest[1].order)) {
          shelf = candidate;
          oldest = next;
        }
      }
      if (shelf === undefined || oldest === undefined) break;
      shelf.hand.next();
      const [k, e] = oldest;
      shelf.entries.delete(k);
      if (e.used || e === kept) {
        e.used = false;
        e.order = ++this.clock;
        shelf.entries.set(k, e);
      } else {
        this.drop(shelf, k, e);
      }
    }
  }

  /** The entry `shelf`'s hand offers next, past any answer replaced since it was kept. */
  private offered(shelf: Shelf): [string, Entry] | undefined {
    let next = shelf.hand.peek();
    while (next?.[1].replaced) {
      shelf.hand.next();
      next = shelf.hand.peek();
    }
    return next;
  }

  /** Uncounts an entry taken off `shelf`. */
  private drop(shelf: Shelf, key: string, entry: Entry): void {
    const cost = entryCost(key, entry);
    shelf.bytes -= cost;
    this.bytes -= cost;
  }

  /**
   * The shelf an answer read at `head` joins; undefined when the chain has moved past that head.
   * A chain's head only moves forward between two clears (a head that goes back clears the
   * cache), and a lookup is answered only by an entry of its own head, so once a newer head's
   * answer is stored every answer kept for an older one is dead: its shelf is dropped then, whole,
   * rather than holding the budget until the eviction's hand comes round to it, and crowding out
   * answers that are still good (decision 206).
   */
  private shelfAt(chainId: number, head: number): Shelf | undefined {
    const current = this.heads.get(chainId);
    if (current?.head === head) return current;
    if (current?.head !== undefined && head < current.head) return undefined;
    if (current !== undefined) this.bytes -= current.bytes;
    const shelf = new Shelf(head);
    this.heads.set(chainId, shelf);
    this.shelves = [this.forever, ...this.heads.values()];
    return shelf;
  }
}

type BlockParam = { kind: "hash" } | { kind: "tag"; tag: string } | { kind: "number"; number: number };

/** What a block parameter names: a hash (immutable), a tag, or a number. */
function blockOf(p: unknown): BlockParam | undefined {
  if (typeof p === "string") {
    if (/^0x[0-9a-fA-F]{64}$/.test(p)) return { kind: "hash" };
    if (/^0x[0-9a-fA-F]{1,16}$/.test(p)) return { kind: "number", number: Number.parseInt(p.slice(2), 16) };
    if (["latest", "safe", "finalized", "pending", "earliest"].includes(p)) return { kind: "tag", tag: p };
  } else if (typeof p === "object" && p !== null) {
    if ("blockHash" in p) return { kind: "hash" };
    const n = (p as { blockNumber?: unknown }).blockNumber;
    if (typeof n === "string") return { kind: "number", number: Number.parseInt(n.slice(2), 16) };
  }
  return undefined;
}
