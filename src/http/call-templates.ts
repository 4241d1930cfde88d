/** Node reads answered from the cache before, kept by their text less the id: the same call again skips the parse, the check of its parameters and the writing of its cache key. */
import type { PlainCall } from "../rpc/dispatcher.js";

/**
 * A client that reads the same thing again sends the same bytes but for the id (viem, ethers and
 * web3.js count it up): the fast path parsed the body, checked the parameters and wrote the cache
 * key each time, about 14k of a cache hit's 116k instructions (decision 221). A body whose call
 * was answered from the cache is kept here by its text with the id's value cut out; a later body
 * that is the same text around another id is that call with that id, and is answered from what
 * was worked out the first time. Anything else (another spacing, another order of the fields, an
 * id written otherwise) is parsed as before.
 */

/** Longer bodies are never kept, so the kept texts stay small (at most MAX_KEPT of them). */
const MAX_TEXT = 1024;
/** Calls kept at most; past it all are dropped and learned again (a plain bound, no order kept). */
const MAX_KEPT = 4096;
/** The longest string id taken from the text (longer ones are parsed as before). */
const MAX_ID_CHARS = 64;

const ID_KEY = '"id":';

/** NaN (past the end) is no digit. */
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** Where an id's value lies in a body's text, and the value. */
export interface IdSpan {
  start: number;
  end: number;
  id: string | number;
}

/**
 * The value after the first `"id":` in `text`, when it is written plainly: an integer of at most 15
 * digits (exact as a double) or a string of printable ASCII without quote or backslash, followed
 * by `,` or `}`. Whether it is the call's own id is for `CallTemplates.learn` to prove.
 */
export function idSpan(text: string): IdSpan | undefined {
  const key = text.indexOf(ID_KEY);
  if (key < 0) return undefined;
  const start = key + ID_KEY.length;
  let end = start;
  let id: string | number;
  if (text.charCodeAt(start) === 0x22) {
    end = start + 1;
    for (let c = text.charCodeAt(end); c !== 0x22; c = text.charCodeAt(++end)) {
      // NaN past the end fails the test too.
      if (!(c >= 0x20 && c <= 0x7e) || c === 0x5c || end - start > MAX_ID_CHARS) return undefined;
    }
    end++;
    id = text.slice(start + 1, end - 1);
  } else {
    if (text.charCodeAt(end) === 0x2d) end++;
    const digits = end;
    const first = text.charCodeAt(end);
    if (!isDigit(first)) return undefined;
    end++;
    // A leading zero stands alone in JSON ("01" is not a number).
    if (first !== 0x30) while (isDigit(text.charCodeAt(end))) end++;
    if (end - digits > 15) return undefined;
    id = Number(text.slice(start, end));
  }
  const next = text.charCodeAt(end);
  return next === 0x2c || next === 0x7d ? { start, end, id } : undefined;
}

/** A kept call's parameters are shared by every request that finds it: nothing may change them. */
function frozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

/** What a kept body makes: its parameters as parsed, and its plain call. */
interface Kept {
  params: unknown;
  plain: PlainCall;
}

/** A body found again: its parameters as parsed, its call, and its own id. */
export interface KnownCall extends Kept {
  id: string | number;
}

/** The calls kept for one scope, and the last one found: a client reading the same call again finds it by comparing, without a key. */
interface Scope {
  calls: Map<string, Kept>;
  /** The text before and after the id of the call found last, and that call. */
  last: { before: string; after: string; kept: Kept } | undefined;
}

export class CallTemplates {
  /**
   * By chain, then by path (`/` or a Native path), then by the body's text less its id's value.
   * Nested rather than keyed by one joined string: the joined scope was a new string to hash on
   * every hit.
   */
  private readonly byChain = new Map<number, Map<string, Scope>>();
  private kept = 0;

  /** The call `text` makes on chain `chainId` at `url` when it was learned with another id; undefined otherwise. */
  find(chainId: number, url: string, text: string): KnownCall | undefined {
    if (text.length > MAX_TEXT) return undefined;
    const scope = this.byChain.get(chainId)?.get(url);
    if (scope === undefined) return undefined;
    const span = idSpan(text);
    if (span === undefined) return undefined;
    const before = text.slice(0, span.start);
    const after = text.slice(span.end);
    // The same call as the last one found compares in place (its two sides against the last's,
    // memcmp-like); the key below is a new string, joined and hashed on every hit.
    const last = scope.last;
    if (last !== undefined && after === last.after && before === last.before)
      return { params: last.kept.params, plain: last.kept.plain, id: span.id };
    const kept = scope.calls.get(before + after);
    if (kept === undefined) return undefined;
    scope.last = { before, after, kept };
    return { params: kept.params, plain: kept.plain, id: span.id };
  }

  /**
   * Keeps `plain`, the call that `text` (parsed as a whole: its id `id`, its parameters `params`)
   * makes on chain `chainId` at `url`. The id's
   * span is the call's id only if another value written there becomes the call's id: the text is
   * parsed once more with another value in the span, and kept only if so. A span elsewhere (a key
   * `"id"` inside the parameters, or before the call's own id written with spaces) fails that.
   */
  learn(chainId: number, url: string, text: string, id: unknown, params: unknown, plain: PlainCall): void {
    if (text.length > MAX_TEXT) return;
    const span = idSpan(text);
    if (span === undefined || span.id !== id) return;
    const before = text.slice(0, span.start);
    const after = text.slice(span.end);
    const other = typeof span.id === "string" ? 0 : "";
    let probe: unknown;
    try {
      probe = JSON.parse(before + JSON.stringify(other) + after);
    } catch {
      return;
    }
    if (typeof probe !== "object" || probe === null || (probe as { id?: unknown }).id !== other) return;
    if (this.kept >= MAX_KEPT) {
      this.byChain.clear();
      this.kept = 0;
    }
    let paths = this.byChain.get(chainId);
    if (paths === undefined) {
      paths = new Map();
      this.byChain.set(chainId, paths);
    }
    let scope = paths.get(url);
    if (scope === undefined) {
      scope = { calls: new Map(), last: undefined };
      paths.set(url, scope);
    }
    const rest = before + after;
    if (scope.calls.has(rest)) return;
    scope.calls.set(rest, {
      params: frozen(params),
      plain: Object.freeze({ ...plain, checked: frozen(plain.checked) }),
    });
    this.kept++;
  }
}
