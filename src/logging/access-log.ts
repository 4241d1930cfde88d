/** One access-log line per HTTP request, written in batches off the request's path: the default, fast enough to keep on. */
import { hostname } from "node:os";
import type { DestinationStream, Logger } from "pino";
import { redactUrl } from "./create-logger.js";
import { destinationOf } from "./logger-destination.js";

/** What one line says of a request. */
export interface AccessEntry {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly ms: number;
  readonly remoteAddress: string | undefined;
  /** The API key's id, when the caller sent a known one. */
  readonly key?: string | undefined;
  /** The JSON-RPC method, where the path that answered knows it. */
  readonly rpc?: string | undefined;
}

export interface AccessLogOptions {
  /** Lines held before they are written at once (a write per line cost a quarter of a cache hit). */
  readonly flushBytes?: number;
  /** The longest a line waits to be written. */
  readonly flushMs?: number;
  /**
   * The most bytes handed to a destination that is behind (its write said so and it has not
   * drained since) before further batches are dropped and counted instead.
   */
  readonly maxBacklogBytes?: number;
}

/** A destination that tells when it has caught up (pino's SonicBoom, a Node stream). */
interface Draining {
  once(event: "drain", listener: () => void): unknown;
}

/** The request fields of the last line written, and the text they made. */
interface LastTail {
  readonly url: string;
  readonly method: string;
  readonly status: number;
  readonly remoteAddress: string | undefined;
  readonly key: string | undefined;
  readonly rpc: string | undefined;
  readonly text: string;
  /** Whether the text is all ASCII (then a line with a plain id is written as Latin-1: the same bytes). */
  readonly ascii: boolean;
  /** The text's bytes when it is all ASCII (copied into a line as they are; see `record`). */
  readonly bytes: Buffer | undefined;
}

/** pino's info level: the lines read as the logger's own in any pino tool. */
const INFO = 30;
/** A line's head before its time, and the text between its id and its response time. */
const HEAD = `{"level":${INFO},"time":`;
/** pino's warn level: the line that tells of dropped lines. */
const WARN = 40;
const MIDDLE = '","responseTime":';
const HEAD_BYTES = Buffer.from(HEAD, "latin1");
const MIDDLE_BYTES = Buffer.from(MIDDLE, "latin1");
/** Response times written digit by digit (at most 15 places, then `e-3`); a longer one, which no request takes, goes the string's way. */
const MAX_MICROS = 999_999_999_999_999;

/**
 * The lines are pino's JSON shape (level, time, pid, hostname, msg) with the request's fields, so
 * the tools that read chaingate's other logs read these too. A line is a string built by hand (no
 * child logger, no serializers: the URL is the only field a caller shapes, and its secrets are
 * redacted as the logger's own serializer would); lines go to the logger's destination in one write
 * per 64 KB or per 250 ms, whichever comes first, and whatever is held is written on close.
 *
 * A destination whose reader has stopped (a log collector that stalls, a pipe nobody reads) keeps
 * what it is given in memory: pino's SonicBoom queues every write until the descriptor takes it. At
 * a busy gateway's rate that is megabytes a second, held and copied by the collector until the
 * process runs out of heap (a bench that left its gateway's pipe unread measured hits 10% slower and
 * p99 three times longer for it). So the access log hands a destination that is behind at most
 * `maxBacklogBytes` (16 MiB by default), then drops whole batches, counts their lines
 * (`droppedLines`, a metric) and, once the destination drains, writes one warn line saying how many
 * were dropped. Error and other log lines never go this way and are never dropped.
 */
export class AccessLog {
  /**
   * Lines are copied here as bytes as they are made, so the strings die young: held as strings
   * until the write, they outlived the young-generation collections of a busy gateway and were
   * copied and promoted (the default configuration's forwarded reads cost 10% more CPU that way).
   */
  private readonly held: Buffer;
  private length = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly head = HEAD;
  private readonly prefix: string;
  private readonly flushMs: number;
  /** The last line's request fields and the text they made (see `tailOf`). */
  private last: LastTail | undefined;
  /** Whether the line's fixed head (the host name) is all ASCII. */
  private readonly asciiPrefix: boolean;
  /** The prefix and the request id's key, as bytes (when the prefix is ASCII). */
  private readonly prefixBytes: Buffer;
  /** The last line's time and its text: lines in the same millisecond print it once. */
  private lastTime = -1;
  private lastTimeText = "";
  /** Lines in what is held. */
  private heldLines = 0;
  /** Bytes handed to the destination since it last said it was behind and had not drained. */
  private backlog = 0;
  private waitingForDrain = false;
  private readonly maxBacklog: number;
  /** Lines dropped since the destination last drained: told in one line when it does. */
  private droppedSinceDrain = 0;
  /** Lines dropped since start because the destination was behind. */
  droppedLines = 0;

  constructor(
    private readonly destination: DestinationStream,
    options: AccessLogOptions = {},
  ) {
    this.prefix = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
    this.asciiPrefix = !NOT_ASCII.test(this.prefix);
    this.prefixBytes = Buffer.from(`${this.prefix},"reqId":"`, "latin1");
    this.held = Buffer.allocUnsafe(options.flushBytes ?? 64 * 1024);
    this.flushMs = options.flushMs ?? 250;
    this.maxBacklog = options.maxBacklogBytes ?? 16 * 1024 * 1024;
  }

  /** The access log of a logger, or none when the logger does not write info lines. */
  static of(logger: Logger, options?: AccessLogOptions): AccessLog | undefined {
    if (!logger.isLevelEnabled("info")) return undefined;
    return new AccessLog(destinationOf(logger), options);
  }

  record(entry: AccessEntry): void {
    const now = Date.now();
    if (now !== this.lastTime) {
      this.lastTime = now;
      this.lastTimeText = String(now);
    }
    const plainId = isPlain(entry.id);
    const tail = this.tailOf(entry);
    // The response time in ms with 3 decimals, written as integer microseconds and an exponent (an
    // integer prints faster than a fraction, and JSON reads 1234e-3 as 1.234).
    const micros = Math.round(entry.ms * 1000);
    if (
      plainId &&
      this.asciiPrefix &&
      tail.bytes !== undefined &&
      micros >= 0 &&
      micros <= MAX_MICROS &&
      this.put(entry.id, micros, tail.bytes)
    ) {
      this.heldLines++;
      this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
      return;
    }
    const line = `${this.head}${this.lastTimeText}${this.prefix},"reqId":${plainId ? `"${entry.id}"` : JSON.stringify(entry.id)},"responseTime":${micros}e-3${tail.text}`;
    // At most 3 bytes a UTF-16 unit: a line that might not fit is written after what is held.
    if (line.length * 3 > this.held.length - this.length) {
      this.flush();
      if (line.length * 3 > this.held.length) {
        this.hand(line, Buffer.byteLength(line), 1);
        return;
      }
    }
    // An all-ASCII line is the same bytes in Latin-1 and UTF-8, and Latin-1 is copied, not encoded.
    const ascii = plainId && this.asciiPrefix && tail.ascii;
    this.length += this.held.write(line, this.length, ascii ? "latin1" : "utf8");
    this.heldLines++;
    this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
  }

  /**
   * Writes an all-ASCII line straight into what is held, part by part: no line string is joined,
   * flattened and copied by a call into Node (about 3k instructions a line, and a string of a few
   * hundred bytes for the collector per request). False when the line is longer than the batch
   * (then it is written as a string, after what is held).
   */
  private put(id: string, micros: number, tail: Buffer): boolean {
    const time = this.lastTimeText;
    const size =
      HEAD.length + time.length + this.prefixBytes.length + id.length + MIDDLE.length + 18 + tail.length;
    // Longer than a batch: the string's way below writes it whole, after what is held.
    if (size > this.held.length) return false;
    if (size > this.held.length - this.length) this.flush();
    const held = this.held;
    let at = this.length;
    held.set(HEAD_BYTES, at);
    at += HEAD_BYTES.length;
    for (let i = 0; i < time.length; i++) held[at++] = time.charCodeAt(i);
    held.set(this.prefixBytes, at);
    at += this.prefixBytes.length;
    for (let i = 0; i < id.length; i++) held[at++] = id.charCodeAt(i);
    held.set(MIDDLE_BYTES, at);
    at += MIDDLE_BYTES.length;
    // The digits from the last: as many places as the number has.
    let digits = 1;
    for (let rest = micros; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    for (let i = digits - 1, rest = micros; i >= 0; i--, rest = Math.floor(rest / 10))
      held[at + i] = 0x30 + (rest % 10);
    at += digits;
    held[at++] = 0x65; // e
    held[at++] = 0x2d; // -
    held[at++] = 0x33; // 3
    held.set(tail, at);
    this.length = at + tail.length;
    return true;
  }

  /**
   * The line after its time, id and response time. A busy gateway's lines mostly repeat the last
   * one's request, caller and method: that text is kept and used again while they do, instead of
   * being joined and escaped afresh for every line (most of a cache hit's logging cost).
   */
  private tailOf(entry: AccessEntry): LastTail {
    const last = this.last;
    if (
      last !== undefined &&
      entry.url === last.url &&
      entry.method === last.method &&
      entry.status === last.status &&
      entry.remoteAddress === last.remoteAddress &&
      entry.key === last.key &&
      entry.rpc === last.rpc
    )
      return last;
    const url = entry.url === "/" ? '"/"' : JSON.stringify(redactUrl(entry.url));
    const remote = entry.remoteAddress === undefined ? "" : `,"remoteAddress":${quoted(entry.remoteAddress)}`;
    const key = entry.key === undefined ? "" : `,"key":${quoted(entry.key)}`;
    const rpc = entry.rpc === undefined ? "" : `,"rpc":${quoted(entry.rpc)}`;
    const text = `,"req":{"method":"${entry.method}","url":${url}${remote}},"res":{"statusCode":${entry.status}}${key}${rpc},"msg":"request"}\n`;
    const ascii = !NOT_ASCII.test(text);
    this.last = {
      url: entry.url,
      method: entry.method,
      status: entry.status,
      remoteAddress: entry.remoteAddress,
      key: entry.key,
      rpc: entry.rpc,
      text,
      ascii,
      bytes: ascii ? Buffer.from(text, "latin1") : undefined,
    };
    return this.last;
  }

  /** Writes what is held (or, while the destination is too far behind, drops and counts it). */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.length === 0) return;
    const bytes = this.length;
    const lines = this.heldLines;
    this.length = 0;
    this.heldLines = 0;
    this.hand(this.held.toString("utf8", 0, bytes), bytes, lines);
  }

  /** Gives the destination whole lines, unless it is too far behind to take them. */
  private hand(text: string, bytes: number, lines: number): void {
    if (this.backlog + bytes > this.maxBacklog) {
      this.drop(lines);
      return;
    }
    // pino's type says write answers nothing; SonicBoom and Node streams answer false when behind.
    const caughtUp: unknown = this.destination.write(text);
    if (caughtUp !== false || !canDrain(this.destination)) return;
    this.backlog += bytes;
    if (this.waitingForDrain) return;
    this.waitingForDrain = true;
    this.destination.once("drain", () => this.drained());
  }

  private drop(lines: number): void {
    this.droppedLines += lines;
    this.droppedSinceDrain += lines;
  }

  /** The destination caught up: what it was given is written, and any drop is told once. */
  private drained(): void {
    this.waitingForDrain = false;
    this.backlog = 0;
    if (this.droppedSinceDrain === 0) return;
    const dropped = this.droppedSinceDrain;
    this.droppedSinceDrain = 0;
    this.hand(
      `{"level":${WARN},"time":${Date.now()}${this.prefix},"dropped":${dropped},"msg":"access-log lines dropped: the log's reader fell behind"}\n`,
      0,
      0,
    );
  }
}

function canDrain(destination: DestinationStream): destination is DestinationStream & Draining {
  return typeof (destination as Partial<Draining>).once === "function";
}

/**
 * Ids, addresses and names in their usual characters (letters, digits, `_.:-`, at most 128) need no
 * escaping; anything else is escaped by JSON. A loop, not a regular expression: each line's request
 * id is tested, and a test through the regular-expression engine cost 1.5k instructions.
 */
function isPlain(text: string): boolean {
  if (text.length > 128) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // 0-9 : . - _ and letters
    if (
      !(
        (c >= 0x30 && c <= 0x3a) ||
        (c >= 0x61 && c <= 0x7a) ||
        (c >= 0x41 && c <= 0x5a) ||
        c === 0x2e ||
        c === 0x2d ||
        c === 0x5f
      )
    )
      return false;
  }
  return true;
}
const quoted = (text: string) => (isPlain(text) ? `"${text}"` : JSON.stringify(text));
/** Any character past ASCII (surrogates included). */
const NOT_ASCII = /[\u0080-\uffff]/;
