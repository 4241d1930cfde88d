/** A request's identity under an Idempotency-Key: the key's form, and a hash of the request that leaves the password out. */
import { createHash } from "node:crypto";
import { ChaingateError } from "../errors/chaingate-error.js";

/** Canonical JSON (sorted keys), so key order does not change a request's identity. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The request's identity; the password is left out so no fast hash of it is ever stored. */
export function requestHash(body: unknown, extra: Record<string, unknown> = {}): string {
  const { password: _password, ...rest } = (
    typeof body === "object" && body !== null ? body : { body }
  ) as Record<string, unknown>;
  return createHash("sha256")
    .update(canonical({ ...rest, ...extra }))
    .digest("hex");
}

export function checkKey(key: string): void {
  if (key.length === 0 || key.length > 200 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ChaingateError("Idempotency-Key must be 1 to 200 visible ASCII characters", {
      code: "INVALID_IDEMPOTENCY_KEY",
    });
  }
}
