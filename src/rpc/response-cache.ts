/** Finality-aware answers cache with in-flight coalescing; answers are kept as JSON text, ready to send. */

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
 * decision 233). It names its chain, not its head's group: an answer still being written after
 * its head's group was dropped would otherwise keep that group's every key alive with it.
 */
class Entry extends JsonText {
  /** Read since it was stored or last spared: eviction passes over it once (second chance). */
  used = false;

  constructor(
    json: JsonText,
    readonly chainId: number,
    /** Head the answer was valid for; undefined for answers that never change. */
    readonly head: number | undefined,
  ) {
    super(json.text, json.items, json.byteLength);
  }
}

/** The keys of one chain's answers kept for its current head (see `ResponseCache.groupAt`). */
interface HeadGroup {
  readonly head: number;
  readonly keys: Set<string>;
}

/**
 * What an entry holds besides its key's and answer's characters: the map's slot, the entry, the
 * strings' headers and the key's concatenation, and for an answer kept for one head its slot in
 * the head's set of keys. Measured with V8 (Node 20) on balances read from a node's bytes as the
 * upstream reads them: 490-495 bytes of heap an entry, of which 93 are characters (decision
 * 233; 336 before it, from answers that were not slices of a node's answer, let such a cache hold
 * 1.44 times its budget). Without it a cache of small answers held 4.6 times its budget (#17:
 * 419,430 entries, RSS past 380 MB, under distinct reads with the default 32 MiB).
 */
export const ENTRY_OVERHEAD_BYTES = 400;

/** Heap an entry is counted as: one byte a character (V8 keeps ASCII strings one byte wide) and the overhead. */
function entryCost(key: string, json: JsonText): number {
  return key.length + json.text.length + ENTRY_OVERHEAD_BYTES;
}

/** Blocks behind the head after which a block's contents are treated as final for caching. */
const FINALITY_DEPTH = 64;

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<JsonText>>();
  private bytes = 0;
  /** The CLOCK hand: eviction goes on from where it stopped (see MapHand). */
  private readonly hand = new MapHand(this.entries);
  /** Per chain, the answers kept for its newest head seen here. */
  private readonly heads = new Map<number, HeadGroup>();
  /** Lookups answered from the cache, and those that went to a node (metrics). */
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Forgets every answer: a chain that went back (a restarted node, a deep reorg) may differ anywhere. */
  clear(): void {
    this.entries.clear();
    this.heads.clear();
    this.hand.reset();
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
    const hit = lifetime === "never" ? undefined : this.fresh(place.key, head);
    return { chainId: place.chainId, key: place.key, lifetime, head, hit, paramsText: place.paramsText };
  }

  private fresh(key: string, head: number | undefined): JsonText | undefined {
    const hit = this.entries.get(key);
    if (!hit || (hit.head !== undefined && hit.head !== head)) return undefined;
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
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    this.misses++;
    const fetched = asPromise(fetch);
    // Coalescing only: the entry is dropped when the call settles, whatever the outcome (the
    // caller is handed `run` itself and handles its failure); in the same step, not a second
    // promise hung on `run` (one fewer on every forwarded read).
    const run = fetched.then(
      (result) => {
        this.inFlight.delete(key);
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
        this.inFlight.delete(key);
        throw error;
      },
    );
    this.inFlight.set(key, run);
    return run;
  }

  /** Keeps `json` for `key` when it fits and its head is current; answers the kept entry, else `json`. */
  private store(chainId: number, key: string, json: JsonText, head: number | undefined): JsonText {
    // Larger than the whole budget: never kept.
    const cost = entryCost(key, json);
    if (cost > this.maxBytes) return json;
    const group = head === undefined ? undefined : this.groupAt(chainId, head);
    // Read at a head the chain has since left: no lookup will be made at it again.
    if (head !== undefined && group === undefined) return json;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= entryCost(key, old);
      this.leaveGroup(key, old);
    }
    const entry = new Entry(json, chainId, head);
    this.entries.set(key, entry);
    group?.keys.add(key);
    this.bytes += cost;
    // Oldest first (Map keeps insertion order); an entry read since it was stored or last spared
    // goes to the back instead, once (the CLOCK approximation of least recently used). Every
    // entry is passed at most twice (spared, then dropped), so the walk is bounded.
    for (let steps = 2 * this.entries.size + 2; this.bytes > this.maxBytes && steps > 0; steps--) {
      const next = this.hand.next();
      if (next === undefined) break;
      const [k, e] = next;
      if (k === key) continue;
      this.entries.delete(k);
      if (e.used) {
        e.used = false;
        this.entries.set(k, e);
      } else {
        this.bytes -= entryCost(k, e);
        this.leaveGroup(k, e);
      }
    }
    return entry;
  }

  /** Takes a dropped entry's key out of its head's group (an entry kept for a head is in its chain's current group). */
  private leaveGroup(key: string, entry: Entry): void {
    if (entry.head === undefined) return;
    const group = this.heads.get(entry.chainId);
    if (group?.head === entry.head) group.keys.delete(key);
  }

  /**
   * The group an answer read at `head` joins; undefined when the chain has moved past that head.
   * A chain's head only moves forward between two clears (a head that goes back clears the
   * cache), and a lookup is answered only by an entry of its own head, so once a newer head's
   * answer is stored every answer kept for an older one is dead: it is dropped then, at once,
   * rather than holding the budget until the eviction's hand comes round to it, and crowding out
   * answers that are still good (decision 206).
   */
  private groupAt(chainId: number, head: number): HeadGroup | undefined {
    const current = this.heads.get(chainId);
    if (current?.head === head) return current;
    if (current !== undefined && head < current.head) return undefined;
    if (current !== undefined) {
      for (const key of current.keys) {
        const entry = this.entries.get(key);
        if (entry === undefined) continue;
        this.entries.delete(key);
        this.bytes -= entryCost(key, entry);
      }
    }
    const group: HeadGroup = { head, keys: new Set() };
    this.heads.set(chainId, group);
    return group;
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
