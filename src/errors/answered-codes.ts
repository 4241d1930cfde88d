/** How many answers carried each stable error code since start, counted where an error becomes an answer (REST problem or JSON-RPC error). */
import type { ErrorCode } from "./codes.js";

const counts = new Map<string, number>();

/** An answer carried `code` (a REST problem, a JSON-RPC error object, a WebSocket error). */
export function noteAnswered(code: ErrorCode | string): void {
  counts.set(code, (counts.get(code) ?? 0) + 1);
}

/** Every code answered so far, with its count (what `/metrics` serves as chaingate_errors_answered_total). */
export function answeredCodes(): ReadonlyMap<string, number> {
  return counts;
}
