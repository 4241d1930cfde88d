/** Idempotency-Key handling: the same key and body get the first answer back, a different body 409. */
import { createHash } from "node:crypto";
import { ChaingateError } from "../errors/chaingate-error.js";
import { isErrorCode } from "../errors/codes.js";
import type { Store } from "../store/database.js";
import { isSignedButNotSent } from "./tx-errors.js";

export type IdempotencyStart = { kind: "new" } | { kind: "replay"; status: number; body: unknown };

const refOf = (route: string, key: string): string => `${route}\n${key}`;

/** How long an in-progress key is held without a renewal; the holder renews it every third of that. */
export const IDEMPOTENCY_LEASE_MS = 10_000;

/** The answer for a key whose request was cut off (a crash) after it signed: what it signed. */
export type Recover = (txHashes: string[]) => { status: number; body: unknown };

/** For routes whose answer cannot be rebuilt from the transactions alone. */
export const interrupted: Recover = (txHashes) => ({
  status: 409,
  body: {
    error: {
      code: "OPERATION_INTERRUPTED",
      message:
        "the request with this Idempotency-Key was interrupted after signing; its transactions are tracked (see data.tx_hashes)",
      data: { tx_hashes: txHashes },
    },
  },
});

/**
 * A failure kept under a key (signed but not sent, or interrupted), as the error every retry with the
 * key is answered: the code, message and data first answered, with the status stored beside them.
 */
export function replayedError(outcome: { status: number; body: unknown }): ChaingateError {
  const stored = (outcome.body as { error?: { code?: unknown; message?: unknown; data?: unknown } }).error;
  return new ChaingateError(String(stored?.message ?? "the first answer to this Idempotency-Key"), {
    code: isErrorCode(stored?.code) ? stored.code : "INTERNAL",
    status: outcome.status,
    data: stored?.data,
  });
}

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

export class IdempotencyStore {
  /** Keys this process is working on; their leases are renewed while it does. */
  private readonly held = new Map<string, { route: string; key: string }>();
  private renewer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly leaseMs: number = IDEMPOTENCY_LEASE_MS,
  ) {}

  async begin(
    route: string,
    key: string,
    hash: string,
    recover: Recover = interrupted,
  ): Promise<IdempotencyStart> {
    checkKey(key);
    const db = this.store.db;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.now();
      const inserted = await db
        .insertInto("idempotency_keys")
        .values({
          route,
          key,
          request_hash: hash,
          status: "in_progress",
          response_status: null,
          response_body: null,
          created_at: now,
          lease_until: now + this.leaseMs,
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
      if (!row) continue;
      if (row.request_hash !== hash) {
        throw new ChaingateError("Idempotency-Key was already used with a different request body", {
          code: "IDEMPOTENCY_KEY_REUSED",
        });
      }
      if (row.status === "done") {
        return {
          kind: "replay",
          status: row.response_status ?? 200,
          body: JSON.parse(row.response_body ?? "null"),
        };
      }
      const leaseUntil = row.lease_until ?? row.created_at + this.leaseMs;
      if (leaseUntil > now) {
        throw new ChaingateError("A request with this Idempotency-Key is still in progress", {
          code: "IDEMPOTENCY_IN_PROGRESS",
          data: { retry_after_ms: leaseUntil - now },
        });
      }
      // The holder stopped renewing (it crashed): the transactions tell what it got done.
      const signed = await this.signedUnder(route, key);
      if (signed.length > 0) {
        const answer = recover(signed);
        await this.finish(route, key, answer.status, answer.body);
        return { kind: "replay", ...answer };
      }
      // Nothing was signed: the work never started, so this request takes the key over.
      const taken = await db
        .updateTable("idempotency_keys")
        .set({ lease_until: now + this.leaseMs })
        .where("route", "=", route)
        .where("key", "=", key)
        .where("status", "=", "in_progress")
        .where("lease_until", row.lease_until === null ? "is" : "=", row.lease_until)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { kind: "new" };
    }
    throw new ChaingateError("A request with this Idempotency-Key is still in progress", {
      code: "IDEMPOTENCY_IN_PROGRESS",
    });
  }

  /** Hashes of the transactions a request under this key signed that a chain may have (oldest first). */
  private async signedUnder(route: string, key: string): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom("transactions")
      .select(["tx_hash", "state", "block_number"])
      .where("idempotency_ref", "=", refOf(route, key))
      .orderBy("created_at")
      .execute();
    return rows.filter((r) => r.state !== "failed" || r.block_number !== null).map((r) => r.tx_hash);
  }

  async finish(route: string, key: string, status: number, body: unknown): Promise<void> {
    await this.store.db
      .updateTable("idempotency_keys")
      .set({
        status: "done",
        response_status: status,
        response_body: JSON.stringify(body),
        lease_until: null,
      })
      .where("route", "=", route)
      .where("key", "=", key)
      .execute();
  }

  /**
   * Forgets a key whose request changed nothing, so the client may retry with it. When something was
   * signed after all (the error came later, e.g. the database dropped), the key keeps that answer.
   */
  async abandon(route: string, key: string, recover: Recover = interrupted): Promise<void> {
    const signed = await this.signedUnder(route, key);
    if (signed.length > 0) {
      const answer = recover(signed);
      await this.finish(route, key, answer.status, answer.body);
      return;
    }
    await this.store.db
      .deleteFrom("idempotency_keys")
      .where("route", "=", route)
      .where("key", "=", key)
      .execute();
  }

  private hold(route: string, key: string): () => void {
    const id = refOf(route, key);
    this.held.set(id, { route, key });
    this.renewer ??= setInterval(() => void this.renew(), Math.max(10, this.leaseMs / 3));
    this.renewer.unref();
    return () => {
      this.held.delete(id);
      if (this.held.size === 0 && this.renewer !== undefined) {
        clearInterval(this.renewer);
        this.renewer = undefined;
      }
    };
  }

  private async renew(): Promise<void> {
    const byRoute = new Map<string, string[]>();
    for (const { route, key } of this.held.values()) byRoute.set(route, [...(byRoute.get(route) ?? []), key]);
    const until = this.now() + this.leaseMs;
    for (const [route, keys] of byRoute) {
      await this.store.db
        .updateTable("idempotency_keys")
        .set({ lease_until: until })
        .where("route", "=", route)
        .where("key", "in", keys)
        .where("status", "=", "in_progress")
        .execute()
        // A missed renewal is retried on the next beat; the lease is three beats long.
        .catch(() => {});
    }
  }

  /**
   * `run` for a tenant's request, as the caller uses it: the key is scoped to the tenant (another
   * key's identical Idempotency-Key neither replays nor collides), a stored failure is thrown as the
   * error first answered, and the operation is handed the reference its transactions are stored
   * with (undefined without a key).
   */
  async once<T>(
    request: {
      route: string;
      owner: string | null;
      key: string | undefined;
      hash: () => string;
      recover?: Recover;
      authorize?: () => Promise<void>;
    },
    operation: (ref: string | undefined) => Promise<T>,
  ): Promise<T> {
    const route = request.owner === null ? request.route : `${request.route}#${request.owner}`;
    const ref = request.key === undefined ? undefined : refOf(route, request.key);
    const outcome = await this.run(
      route,
      request.key,
      request.hash,
      () => operation(ref),
      request.recover,
      request.authorize,
    );
    if (outcome.status !== 200) throw replayedError(outcome);
    return outcome.body as T;
  }

  /**
   * Runs `operation` once per key: replays a stored answer, or records the new one. Only answers
   * after which something was signed are kept; failures that changed nothing free the key.
   */
  async run<T>(
    route: string,
    key: string | undefined,
    /** The request's identity (requestHash), computed only when there is a key to bind it to. */
    hash: () => string,
    operation: () => Promise<T>,
    routeRecover?: Recover,
    /**
     * Proves the caller may run the operation (its wallet's password, an unlocked account), before a
     * stored answer is replayed: the key is no credential, and a replay must not answer what a wrong
     * password could not have done. Throws the refusal (and counts toward the wallet's lockout).
     */
    authorize?: () => Promise<void>,
  ): Promise<{ status: number; body: unknown; replayed: boolean }> {
    const recover = routeRecover ?? interrupted;
    if (key === undefined) return { status: 200, body: await operation(), replayed: false };
    const start = await this.begin(route, key, hash(), recover);
    if (start.kind === "replay") {
      await authorize?.();
      return { status: start.status, body: start.body, replayed: true };
    }
    const release = this.hold(route, key);
    try {
      const body = await operation();
      await this.finish(route, key, 200, body);
      return { status: 200, body, replayed: false };
    } catch (error) {
      try {
        if (isSignedButNotSent(error)) {
          // Signed and stored, not yet accepted by a node: the tracker sends it. A retry is told
          // what was signed (the route's answer when it can be rebuilt), never signs again.
          const signed = routeRecover === undefined ? [] : await this.signedUnder(route, key);
          if (routeRecover !== undefined && signed.length > 0) {
            const answer = routeRecover(signed);
            await this.finish(route, key, answer.status, answer.body);
          } else {
            await this.finish(route, key, error.status, {
              error: { code: error.code, message: error.message, data: error.data },
            });
          }
        } else {
          await this.abandon(route, key, recover);
        }
      } catch {
        // The store is down: the key stays in progress and its lease runs out; the next request with
        // it is answered from the transactions then.
      }
      throw error;
    } finally {
      release();
    }
  }
}
