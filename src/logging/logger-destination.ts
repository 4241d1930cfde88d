/** The stream a pino logger writes to, read where pino keeps it. */
import { type DestinationStream, type Logger, symbols } from "pino";

/** The stream a pino logger writes to (pino keeps it under a symbol of its own). */
export function destinationOf(logger: Logger): DestinationStream {
  const stream: unknown = (logger as unknown as Record<symbol, unknown>)[symbols.streamSym];
  if (
    typeof stream !== "object" ||
    stream === null ||
    typeof (stream as DestinationStream).write !== "function"
  )
    throw new Error("the logger has no destination stream");
  return stream as DestinationStream;
}
