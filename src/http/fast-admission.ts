/** Who a fast path may answer: the caller the full path's guards would admit, read off the headers alone, with its place among the key's requests in flight. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KeyRing, Tenant } from "../auth/key-ring.js";
import { bearerKey, type RequestsInFlight } from "./access-control.js";
import { type BrowserGuardOptions, hostAllowed } from "./browser-guard.js";

export interface AdmissionOptions {
  keys: KeyRing;
  inFlight: RequestsInFlight;
  guard: Omit<BrowserGuardOptions, "keys">;
}

/** An admitted caller: its key (null without keys) and its slot, given back by `release` or when the response closes. */
export interface Caller {
  tenant: Tenant | null;
  release: () => void;
}

const NOTHING_HELD = () => {};

/**
 * The caller when the full path would admit it without a database read: an API key already known,
 * or without keys a Host the browser guard accepts. Browsers (an Origin: CORS answers), upgrades,
 * chunked bodies and bodies over `maxBodyBytes` are the full path's. Undefined takes nothing.
 */
export function admitCaller(
  request: IncomingMessage,
  response: ServerResponse,
  options: AdmissionOptions,
  maxBodyBytes: number,
): Caller | undefined {
  const headers = request.headers;
  if (
    headers.origin !== undefined ||
    headers.upgrade !== undefined ||
    headers["transfer-encoding"] !== undefined
  )
    return undefined;
  const size = Number(headers["content-length"]);
  if (!(size > 0 && size <= maxBodyBytes)) return undefined;
  if (!options.keys.enabledNow)
    return hostAllowed(headers.host, options.guard) ? { tenant: null, release: NOTHING_HELD } : undefined;
  const key = bearerKey(request);
  const tenant = key === undefined ? undefined : options.keys.known(key);
  if (tenant === undefined) return undefined;
  const release = options.inFlight.enter(tenant.keyId, response);
  return release === undefined ? undefined : { tenant, release };
}
