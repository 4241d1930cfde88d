/** The event types a webhook can subscribe to, and how a subscription's patterns match them. */

export const EVENT_TYPES = [
  "transaction.queued",
  "transaction.sent",
  "transaction.mined",
  "transaction.confirmed",
  "transaction.failed",
  "transaction.replaced",
  "transaction.dropped",
  "transport.sent",
  "transport.awaiting_quorum",
  "transport.reorged",
  "transport.queued",
  "transport.delivering",
  "transport.delivered",
  "transport.failed",
  "transport.refunded",
  "policy.denied",
  "wallet.balance_low",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A subscription pattern: an exact type, a group ("transaction.*") or everything ("*"). */
export const EVENT_PATTERN = /^(\*|(transaction|transport|policy|wallet)\.(\*|[a-z_]+))$/;

export function isKnownPattern(pattern: string): boolean {
  if (!EVENT_PATTERN.test(pattern)) return false;
  if (pattern === "*" || pattern.endsWith(".*")) return true;
  return (EVENT_TYPES as readonly string[]).includes(pattern);
}

export function matchesAny(patterns: readonly string[], type: string): boolean {
  return patterns.some(
    (p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))),
  );
}
