/** Idempotency-Key handling as the routes use it: the same key and body get the first answer back (after the caller proves it could make the request), a different body 409. */
import type { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import { KeyLeases, refOf } from "./key-leases.js";
import { interrupted, type Recover, replayedError } from "./replay.js";

export class IdempotencyStore {
  private readonly leases: KeyLeases;

  constructor(
    store: Store,
    /**
     * A failure after which the key keeps its answer rather than being freed: the operation signed
     * and stored something no node took yet (tx-errors.ts: SignedNotSentError), which a retry must
     * never sign again.
     */
    private readonly keepsKey: (error: unknown) => error is ChaingateError = (
      _error: unknown,
    ): _error is ChaingateError => false,
    now?: () => number,
    leaseMs?: number,
  ) {
    this.leases = new KeyLeases(store, now, leaseMs);
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
    const start = await this.leases.begin(route, key, hash(), recover);
    if (start.kind === "replay") {
      await authorize?.();
      return { status: start.status, body: start.body, replayed: true };
    }
    const release = this.leases.hold(route, key);
    try {
      const body = await operation();
      await this.leases.finish(route, key, 200, body);
      return { status: 200, body, replayed: false };
    } catch (error) {
      try {
        if (this.keepsKey(error)) {
          // Signed and stored, not yet accepted by a node: the tracker sends it. A retry is told
          // what was signed (the route's answer when it can be rebuilt), never signs again.
          const signed = routeRecover === undefined ? [] : await this.leases.signedUnder(route, key);
          if (routeRecover !== undefined && signed.length > 0) {
            const answer = routeRecover(signed);
            await this.leases.finish(route, key, answer.status, answer.body);
          } else {
            await this.leases.finish(route, key, error.status, {
              error: { code: error.code, message: error.message, data: error.data },
            });
          }
        } else {
          await this.leases.abandon(route, key, recover);
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
