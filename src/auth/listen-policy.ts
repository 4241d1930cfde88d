/** Where chaingate may listen: a non-loopback address only with API keys or an explicit --insecure. */
import type { Config } from "../config/config.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { KeyRing } from "./key-ring.js";

/** Loopback only: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export async function assertSafeListen(config: Config, keys: KeyRing): Promise<void> {
  if (isLoopback(config.host) || config.insecure || (await keys.enabled())) return;
  throw new ChaingateError(
    `refusing to listen on ${config.host} with no API keys: anyone who can reach it could use every wallet. ` +
      "Create a key (chaingate keys create --role admin), listen on 127.0.0.1, or pass --insecure.",
    { code: "INSECURE_LISTEN" },
  );
}
