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

/** Query parameters whose values are never logged (a key mistakenly sent as `?api_key=`). */
const SECRET_QUERY = /key|token|secret|password|auth|sig/i;

/** The URL with the values of secret-looking query parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  if (q === -1) return url;
  const query = url
    .slice(q + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return eq !== -1 && SECRET_QUERY.test(decodeURIComponentSafe(name)) ? `${name}=[redacted]` : pair;
    })
    .join("&");
  return `${url.slice(0, q)}?${query}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's request line, with the URL's secrets redacted. */
function serializeRequest(req: LoggedRequest) {
  return {
    method: req.method,
    url: typeof req.url === "string" ? redactUrl(req.url) : req.url,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: { req: serializeRequest },
  };
  return destination ? pino(options, destination) : pino(options);
}
