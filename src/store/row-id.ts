/** Ids for rows written on hot paths: UUIDv7 (RFC 9562), so each new row lands at the end of its primary-key index. */
import { randomUUID } from "node:crypto";

/**
 * A version 7 UUID: 48 bits of Unix milliseconds, then the version, then 74 random bits (taken
 * from a v4 UUID, whose random pool Node keeps filled). A v4 id put every insert at a random place
 * of the primary-key index: on SQLite each commit of a group rewrote pages all over the index and
 * the WAL grew by a third more per transaction (#17, docs/decisions.md 86). Time-ordered ids append.
 * Ids stay unguessable (74 random bits) and sort by creation time, to the millisecond.
 */
export function rowId(now: number = Date.now()): string {
  const random = randomUUID();
  const time = now.toString(16).padStart(12, "0");
  // random is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep from the 3 digits after the version on.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
