/** The error code index of docs/api.md, written from the catalogue so the two cannot drift apart. */
import { ERROR_CODES, type ErrorCodeEntry } from "./codes.js";

export const INDEX_START =
  "<!-- error-index:start (npm run docs:errors writes this table from src/errors/codes.ts) -->";
export const INDEX_END = "<!-- error-index:end -->";

function row(code: string, entry: ErrorCodeEntry): string[] {
  const http =
    entry.at ?? (entry.alsoStatus ? `${entry.status} or ${entry.alsoStatus}` : String(entry.status));
  const rpc = code === "NODE_ERROR" ? "the node's" : entry.rpc === undefined ? "-" : String(entry.rpc);
  const retry = entry.failover ? "yes, and failover" : entry.retry ? "yes" : "no";
  return [`\`${code}\``, http, entry.at ? "-" : rpc, retry, entry.meaning];
}

/** A Markdown table, columns padded as Biome and Prettier leave them. */
export function renderErrorIndex(): string {
  const head = ["code", "HTTP", "JSON-RPC", "retry", "meaning"];
  const rows = Object.entries(ERROR_CODES).map(([code, entry]) => row(code, entry));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

/** `doc` with the text between the markers replaced by the current index. */
export function withErrorIndex(doc: string): string {
  const start = doc.indexOf(INDEX_START);
  const end = doc.indexOf(INDEX_END);
  if (start < 0 || end < start) throw new Error("docs/api.md has no error-index markers");
  return `${doc.slice(0, start + INDEX_START.length)}\n\n${renderErrorIndex()}\n\n${doc.slice(end)}`;
}
