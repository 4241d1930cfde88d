/** Answer bytes held in memory until written: bounded per request, per tenant and per process. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { limitExceeded } from "../filters/log-query.js";

const MIB = 1_048_576;
const mib = (bytes: number) => Math.round(bytes / MIB);
/** Answers at least this large count against a tenant's bytes a second. */
export const LARGE_ANSWER_BYTES = 16 * 1024;

/**
 * Every answer text a request builds is counted from when it is made until the response is written
 * (or the client is gone). A batch of calls that are each within the caps can otherwise make one
 * tenant hold hundreds of megabytes, and several such batches at once the whole heap.
 */
export class AnswerBudget {
  private held = 0;
  private readonly byTenant = new Map<string, number>();
  /** Each tenant's bucket of answer bytes (what it may still be answered now, and when that was so). */
  private readonly flow = new Map<string, { level: number; at: number }>();

  constructor(
    /** Bytes one tenant's requests may hold at once. */
    readonly perTenant: number,
    /** Bytes every request of this process may hold at once. */
    readonly perProcess: number,
    /**
     * Answer bytes one tenant may be given per second (0: no limit): what bounds the work a tenant
     * can make the gateway and its nodes do, however promptly it reads (large log queries).
     */
    readonly perSecond = 0,
    private readonly now: () => number = Date.now,
  ) {}

  /** One request's account; `ceiling` is what the request alone may answer (`what`: "the answer", "the batch answer"). */
  open(tenant: string, ceiling: number, what: string): AnswerAccount {
    return new AnswerAccount(this, tenant, ceiling, what);
  }

  /** Bytes held now, by everyone and by one tenant (for tests and metrics). */
  heldBy(tenant?: string): number {
    return tenant === undefined ? this.held : (this.byTenant.get(tenant) ?? 0);
  }

  /** @internal What the tenant's bucket holds now; a full bucket is forgotten (the map holds only tenants in debt or refilling). */
  private level(tenant: string): number {
    // The burst is one second's worth: a larger answer is still given whole (the bucket goes into
    // debt), and the tenant's next large reads wait for the debt to be paid.
    const burst = this.perSecond;
    const bucket = this.flow.get(tenant);
    if (bucket === undefined) return burst;
    const level = Math.min(burst, bucket.level + ((this.now() - bucket.at) * this.perSecond) / 1000);
    if (level >= burst) this.flow.delete(tenant);
    return level;
  }

  /** @internal Before node work: refused while the tenant's bucket is empty (it was answered its share lately). */
  flowing(tenant: string): ChaingateError | undefined {
    if (this.perSecond === 0) return undefined;
    const level = this.level(tenant);
    if (level > 0) return undefined;
    const wait = Math.max(1, Math.ceil(-level / this.perSecond));
    return new ChaingateError(
      `this key was answered more than ${mib(this.perSecond)} MiB a second of large reads lately; retry in ${wait} s (or narrow the queries)`,
      { code: "ANSWERS_IN_FLIGHT", data: { retry_after_seconds: wait } },
    );
  }

  /** @internal An answer given: it comes out of the tenant's bucket (which may go into debt). */
  spend(tenant: string, bytes: number): void {
    // Small answers (balances, blocks without transactions) are not what floods: they cost no bookkeeping.
    if (this.perSecond === 0 || bytes < LARGE_ANSWER_BYTES) return;
    this.flow.set(tenant, { level: this.level(tenant) - bytes, at: this.now() });
  }

  /** @internal The refusal for taking `bytes` more, or undefined when they fit. */
  room(tenant: string, bytes: number): ChaingateError | undefined {
    const mine = this.byTenant.get(tenant) ?? 0;
    if (mine + bytes > this.perTenant)
      return busy(
        `this key's requests already hold ${mib(mine)} MiB of answers not yet read (at most ${mib(this.perTenant)} MiB at once); read them, or narrow the queries`,
      );
    if (this.held + bytes > this.perProcess)
      return busy(
        `the gateway holds ${mib(this.held)} MiB of answers not yet read (at most ${mib(this.perProcess)} MiB at once); retry shortly`,
      );
    return undefined;
  }

  /** @internal */
  move(tenant: string, bytes: number): void {
    this.held += bytes;
    const left = (this.byTenant.get(tenant) ?? 0) + bytes;
    if (left <= 0) this.byTenant.delete(tenant);
    else this.byTenant.set(tenant, left);
  }
}

function busy(message: string): ChaingateError {
  return new ChaingateError(message, { code: "ANSWERS_IN_FLIGHT" });
}

export class AnswerAccount {
  private taken = 0;
  private closed = false;

  constructor(
    private readonly budget: AnswerBudget,
    private readonly tenant: string,
    private readonly ceiling: number,
    private readonly what: string,
  ) {}

  /**
   * Before a call does node work: throws when nothing more could be held, so a batch past its
   * budget stops asking nodes instead of reading answers only to drop them.
   */
  check(): void {
    if (this.taken >= this.ceiling) throw this.tooLarge();
    const refusal = this.budget.room(this.tenant, 1) ?? this.budget.flowing(this.tenant);
    if (refusal) throw refusal;
  }

  /** Holds an answer of `bytes`; the refusal (the answer is then dropped) when it does not fit. */
  take(bytes: number): ChaingateError | undefined {
    if (this.taken + bytes > this.ceiling) return this.tooLarge();
    const refusal = this.budget.room(this.tenant, bytes);
    if (refusal) return refusal;
    this.taken += bytes;
    this.budget.move(this.tenant, bytes);
    this.budget.spend(this.tenant, bytes);
    return undefined;
  }

  private tooLarge(): ChaingateError {
    return limitExceeded(
      "RESPONSE_TOO_LARGE",
      `${this.what} is larger than ${mib(this.ceiling)} MiB (narrow the query or split the batch)`,
    );
  }

  /** The response was written (or the client left): everything it held is free. Safe to call twice. */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.move(this.tenant, -this.taken);
    this.taken = 0;
  }
}
