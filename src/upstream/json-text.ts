/** Results kept as the JSON text they arrived in: a large node answer is passed on without being parsed and written again. */

/** A result already serialised; the envelope writer splices it in without stringifying again. */
export class JsonText {
  constructor(
    readonly text: string,
    /** For an array: how many items it holds (counted while it was read). */
    readonly items = 0,
    /** Its UTF-8 length where the reader knows it (a slice of an all-ASCII answer); else counted when first asked. */
    private bytes?: number,
  ) {}

  /** Its UTF-8 length, counted once: a cached answer is written many times. */
  get byteLength(): number {
    this.bytes ??= Buffer.byteLength(this.text);
    return this.bytes;
  }
}

export class MalformedJson extends Error {
  constructor(where: number) {
    super(`malformed JSON at character ${where}`);
    this.name = "MalformedJson";
  }
}

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string that opens at `i`; strings are jumped over with indexOf (the bulk of a log is hex in strings). */
function skipString(text: string, i: number): number {
  for (let from = i + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw new MalformedJson(i);
    let slashes = 0;
    for (let b = quote - 1; b > i && text.charCodeAt(b) === BACKSLASH; b--) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/**
 * Index just past the value that starts at or after `i`, and, for an array, its item count.
 * Structure is checked (strings closed, brackets nested and balanced); numbers and literals are
 * taken as the node wrote them.
 */
export function skipValue(text: string, start: number): { end: number; items: number } {
  const i = skipSpace(text, start);
  const first = text.charCodeAt(i);
  if (first === QUOTE) return { end: skipString(text, i), items: 0 };
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let j = i;
    while (j < text.length) {
      const c = text.charCodeAt(j);
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)) break;
      j++;
    }
    if (j === i) throw new MalformedJson(i);
    return { end: j, items: 0 };
  }
  const open: number[] = [];
  let items = 0;
  let topHasValue = false;
  for (let j = i; j < text.length; ) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      if (open.length === 1) topHasValue = true;
      j = skipString(text, j);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (open.length === 1) topHasValue = true;
      open.push(c);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      const opened = open.pop();
      if ((c === CLOSE_BRACE) !== (opened === OPEN_BRACE)) throw new MalformedJson(j);
      if (open.length === 0)
        return { end: j + 1, items: first === OPEN_BRACKET && topHasValue ? items + 1 : 0 };
    } else if (open.length === 1) {
      if (c === COMMA) items++;
      else if (!isSpace(c) && c !== COLON) topHasValue = true;
    }
    j++;
  }
  throw new MalformedJson(i);
}

/** A member's value as the node wrote it, where it starts in the answer, and for an array its item count. */
export interface MemberText {
  text: string;
  start: number;
  items: number;
}

/** The two members of a JSON-RPC answer that say what it answered (absent ones undefined). */
export interface EnvelopeParts {
  result: MemberText | undefined;
  error: MemberText | undefined;
}

/** An escape, or a control character JSON does not allow raw, between `from` and `to`: such a name goes through JSON.parse. */
function needsDecoding(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c === BACKSLASH) return true;
  }
  return false;
}

/** Which of the two wanted names the string at [start, end) (quotes included) is, as JSON reads it. */
function memberName(text: string, start: number, end: number): "result" | "error" | undefined {
  if (needsDecoding(text, start + 1, end - 1)) {
    let name: unknown;
    try {
      name = JSON.parse(text.slice(start, end));
    } catch {
      throw new MalformedJson(start);
    }
    return name === "result" || name === "error" ? name : undefined;
  }
  // Compared in place: no name is cut out of the text, nor hashed into a map (decision 223).
  const length = end - start - 2;
  if (length === 6 && text.startsWith("result", start + 1)) return "result";
  if (length === 5 && text.startsWith("error", start + 1)) return "error";
  return undefined;
}

/** How anvil, geth, reth, Nethermind and Besu begin their answer to one call: these members, in this order. */
const COMMON_HEAD = '{"jsonrpc":"2.0","id":';
const COMMON_RESULT = ',"result":';

/**
 * The parts of an answer in the common shape, `{"jsonrpc":"2.0","id":<digits>,"result":<value>}`
 * (space after it allowed, none between its tokens), without the general loop's work on the two
 * members before the result (their names found, compared and skipped: about 1,200 instructions of
 * a forwarded read's 2,400 for its answer). Undefined for any other shape, which the general loop
 * reads; a malformed result throws as the general loop's reading of it would.
 */
function commonParts(text: string): EnvelopeParts | undefined {
  if (!text.startsWith(COMMON_HEAD)) return undefined;
  let i = COMMON_HEAD.length;
  while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
  if (i === COMMON_HEAD.length || !text.startsWith(COMMON_RESULT, i)) return undefined;
  const start = skipSpace(text, i + COMMON_RESULT.length);
  const { end, items } = skipValue(text, start);
  if (text.charCodeAt(end) !== CLOSE_BRACE || skipSpace(text, end + 1) !== text.length) return undefined;
  return { result: { text: text.slice(start, end), start, items }, error: undefined };
}

/**
 * A JSON-RPC envelope's `result` and `error`, each as its JSON text, read without building the
 * values: the `result` of a 60 MB log answer stays one string. Every member is checked as JSON
 * (the others are skipped, not kept); a name given twice is the last, as JSON.parse reads it.
 * Throws MalformedJson when the text is not one JSON object.
 */
export function envelopeParts(text: string): EnvelopeParts {
  return commonParts(text) ?? anyEnvelopeParts(text);
}

/** `envelopeParts` for members in any order and spacing. */
export function anyEnvelopeParts(text: string): EnvelopeParts {
  const parts: EnvelopeParts = { result: undefined, error: undefined };
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) throw new MalformedJson(i);
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) {
    if (skipSpace(text, i + 1) !== text.length) throw new MalformedJson(i + 1);
    return parts;
  }
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new MalformedJson(i);
    const keyEnd = skipString(text, i);
    const name = memberName(text, i, keyEnd);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) throw new MalformedJson(i);
    const valueStart = skipSpace(text, i + 1);
    const { end, items } = skipValue(text, valueStart);
    if (name !== undefined) parts[name] = { text: text.slice(valueStart, end), start: valueStart, items };
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) {
      if (skipSpace(text, i + 1) !== text.length) throw new MalformedJson(i + 1);
      return parts;
    }
    if (c !== COMMA) throw new MalformedJson(i);
    i = skipSpace(text, i + 1);
  }
}

/**
 * Longest result made a string of its own rather than a slice of the answer's text. V8 keeps a
 * slice of 13 characters or more as a view of its parent, so a kept result held the node's whole
 * answer with it: a cached balance took 124 bytes of strings in two objects, the envelope's 60
 * characters among them, against 51 in one for its own copy (decision 233). A copy from the
 * answer's bytes costs about 50 ns; past this length what a slice keeps besides its result is a
 * small share of it, and copying a large answer again would cost more than it saves.
 */
export const OWN_COPY_MAX = 4096;

/**
 * An answer's result as JsonText: its own string, copied from the answer's bytes, when it is short
 * and every byte is ASCII (a character then is a byte); else the slice of the answer's text.
 */
export function resultJsonText(result: MemberText, bytes: Buffer, ascii: boolean): JsonText {
  const { text, start, items } = result;
  if (!ascii) return new JsonText(text, items);
  const own = text.length <= OWN_COPY_MAX ? bytes.toString("latin1", start, start + text.length) : text;
  return new JsonText(own, items, own.length);
}

/** Arrays' texts joined into one array's text (the chunks of a wide log query). */
export function concatArrays(parts: readonly JsonText[]): JsonText {
  const inner = parts.filter((p) => p.items > 0).map((p) => p.text.trim().slice(1, -1));
  return new JsonText(
    `[${inner.join(",")}]`,
    parts.reduce((sum, p) => sum + p.items, 0),
  );
}
