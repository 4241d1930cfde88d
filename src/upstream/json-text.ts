/** Results kept as the JSON text they arrived in: a large node answer is passed on without being parsed and written again. */

/** A result already serialised; the envelope writer splices it in without stringifying again. */
export class JsonText {
  private bytes: number | undefined;
  constructor(
    readonly text: string,
    /** For an array: how many items it holds (counted while it was read). */
    readonly items = 0,
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

/** An escape, or a control character JSON does not allow raw: such a key goes through JSON.parse. */
function needsDecoding(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 32 || c === BACKSLASH) return true;
  }
  return false;
}

/**
 * A JSON-RPC envelope's members, each as its JSON text, read without building the values: the
 * `result` of a 60 MB log answer stays one string. Throws MalformedJson when it is not an object.
 */
export function envelopeMembers(text: string): Map<string, { text: string; items: number }> {
  const members = new Map<string, { text: string; items: number }>();
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) throw new MalformedJson(i);
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return members;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new MalformedJson(i);
    const keyEnd = skipString(text, i);
    // A key without escapes is its characters (every envelope key a node writes); others are decoded.
    let key = text.slice(i + 1, keyEnd - 1);
    if (needsDecoding(key))
      try {
        key = JSON.parse(text.slice(i, keyEnd)) as string;
      } catch {
        throw new MalformedJson(i);
      }
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) throw new MalformedJson(i);
    const valueStart = skipSpace(text, i + 1);
    const { end, items } = skipValue(text, valueStart);
    members.set(key, { text: text.slice(valueStart, end), items });
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) {
      if (skipSpace(text, i + 1) !== text.length) throw new MalformedJson(i + 1);
      return members;
    }
    if (c !== COMMA) throw new MalformedJson(i);
    i = skipSpace(text, i + 1);
  }
}

/** Arrays' texts joined into one array's text (the chunks of a wide log query). */
export function concatArrays(parts: readonly JsonText[]): JsonText {
  const inner = parts.filter((p) => p.items > 0).map((p) => p.text.trim().slice(1, -1));
  return new JsonText(
    `[${inner.join(",")}]`,
    parts.reduce((sum, p) => sum + p.items, 0),
  );
}
