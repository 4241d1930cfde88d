/** The one pino set-up: JSON lines, with every field that could carry a secret redacted wherever it sits. */
import { type DestinationStream, type Logger, pino } from "pino";

const SECRET_FIELDS = [
  "password",
  "mnemonic",
  "seed",
  "private_key",
  "privateKey",
  "keystore",
  "operatorKey",
  "operator_key",
  "authorization",
  "apiKey",
  "api_key",
];

/** Top level, and one and two levels down (`body.password`, `req.headers.authorization`). */
export const REDACT_PATHS = SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]);

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: "[redacted]" } };
  return destination ? pino(options, destination) : pino(options);
}
