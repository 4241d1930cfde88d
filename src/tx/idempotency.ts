/** Idempotency-Key handling: the same key and body get the first answer back, a different body 409. */
import { createHash } from "node:crypto";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";

export type IdempotencyStart = { kind: "new" } | { kind: "replay"; status: number; body: unknown };

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
      status: 400,
      rpcCode: -32602,
    });
  }
}

export class IdempotencyStore {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async begin(route: string, key: string, hash: string): Promise<IdempotencyStart> {
    checkKey(key);
    const db = this.store.db;
    const inserted = await db
      .insertInto("idempotency_keys")
      .values({
        route,
        key,
        request_hash: hash,
        status: "in_progress",
        response_status: null,
        response_body: null,
        created_at: this.now(),
      })
      .onConflict((oc) => oc.columns(["route", "key"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { kind: "new" };
    const row = await db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("route", "=", route)
      .where("key", "=", key)
      .executeTakeFirst();
    if (!row) return this.begin(route, key, hash);
    if (row.request_hash !== hash) {
      throw new ChaingateError("Idempotency-Key was already used with a different request body", {
        code: "IDEMPOTENCY_KEY_REUSED",
        status: 409,
        rpcCode: -32602,
      });
    }
    if (row.status !== "done") {
      throw new ChaingateError("A request with this Idempotency-Key is still in progress", {
        code: "IDEMPOTENCY_IN_PROGRESS",
        status: 409,
        rpcCode: -32603,
        retryable: true,
      });
    }
    return {
      kind: "replay",
      status: row.response_status ?? 200,
      body: JSON.parse(row.response_body ?? "null"),
    };
  }

  async finish(route: string, key: string, status: number, body: unknown): Promise<void> {
    await this.store.db
      .updateTable("idempotency_keys")
      .set({ status: "done", response_status: status, response_body: JSON.stringify(body) })
      .where("route", "=", route)
      .where("key", "=", key)
      .execute();
  }

  /** Forgets a key whose request changed nothing, so the client may retry with it. */
  async abandon(route: string, key: string): Promise<void> {
    await this.store.db
      .deleteFrom("idempotency_keys")
      .where("route", "=", route)
      .where("key", "=", key)
      .execute();
  }

  /**
   * Runs `operation` once per key: replays a stored answer, or records the new one. Only answers
   * after which something was signed are kept; failures that changed nothing free the key.
   */
  async run<T>(
    route: string,
    key: string | undefined,
    hash: string,
    operation: () => Promise<T>,
    keepError: (error: unknown) => boolean,
  ): Promise<{ status: number; body: unknown; replayed: boolean }> {
    if (key === undefined) return { status: 200, body: await operation(), replayed: false };
    const start = await this.begin(route, key, hash);
    if (start.kind === "replay") return { status: start.status, body: start.body, replayed: true };
    try {
      const body = await operation();
      await this.finish(route, key, 200, body);
      return { status: 200, body, replayed: false };
    } catch (error) {
      if (keepError(error) && error instanceof ChaingateError) {
        await this.finish(route, key, error.status, {
          error: { code: error.code, message: error.message, data: error.data },
        });
      } else {
        await this.abandon(route, key);
      }
      throw error;
    }
  }
}
