/** A resumable stream's cursor: the stream, the client's position in it, and how many notifications went out up to it. */
import { invalidParams } from "../errors/rpc-errors.js";

export interface Position {
  block: number;
  /** For logs: the last log index sent in `block` (-1: none of it yet). */
  index: number;
}

/** `<stream>-<block>-<index + 1>-<count>`, in lower-case hex. */
export const cursorOf = (stream: string, at: Position, count: number) =>
  `${stream}-${at.block.toString(16)}-${(at.index + 1).toString(16)}-${count.toString(16)}`;

/** A cursor's parts; cursors made before decision 190 carry no count. Anything else is refused. */
export function parseCursor(cursor: unknown): { stream: string; at: Position; count: number | undefined } {
  const match =
    typeof cursor === "string"
      ? /^([0-9a-f]{32})-([0-9a-f]{1,12})-([0-9a-f]{1,8})(?:-([0-9a-f]{1,12}))?$/.exec(cursor)
      : null;
  if (!match)
    throw invalidParams("resumeAfter must be a cursor from a notification of a resumable subscription");
  return {
    stream: match[1]!,
    at: { block: Number.parseInt(match[2]!, 16), index: Number.parseInt(match[3]!, 16) - 1 },
    count: match[4] === undefined ? undefined : Number.parseInt(match[4], 16),
  };
}
