/** Where every signature asks for leave: policies checked, rolling limits counted under the nonce lock, decisions audited. */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Hex } from "viem";
import { type AuditEntry, appendAudit, auditRows } from "../audit/audit-log.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import { type InsertPart, insertRow } from "../store/insert-row.js";
import { rowId } from "../store/row-id.js";
import type { AuditDecision, Database } from "../store/schema.js";
import { recordEvent } from "../webhooks/outbox.js";
import { decodeCall } from "./decode-call.js";
import {
  checkMessage,
  checkSimulation,
  checkTransaction,
  type DailyLimit,
  type Denial,
  dailyLimits,
  type MessageFacts,
  type TransactionFacts,
  wantsSimulation,
} from "./evaluate-policy.js";
import type { Policy } from "./policy-rules.js";
import type { PolicyStore } from "./policy-store.js";
import type { Simulation } from "./simulate-transaction.js";

const DAY_MS = 24 * 3_600_000;

/** Who signs what: everything a decision and its audit entry need. */
export interface SigningRequest {
  /** The API key asking (or whose request this continues); null without keys. */
  apiKeyId: string | null;
  walletId: string | null;
  address: string;
  chainId: number;
  /** transfer, eth_sendTransaction, transfer_erc20, replacement, ... */
  operation: string;
  to: string | null;
  value: bigint;
  data: Hex;
  gas: bigint;
  feePerGas: bigint;
}

/** A request that passed the rules that need no store; its rolling limits are checked in the signing transaction. */
export interface Admission {
  request: SigningRequest;
  facts: TransactionFacts;
  limits: DailyLimit[];
  /**
   * The policies were not read (`admitLater`): the signing transaction must find none bound to the
   * wallet or the key, or the request is admitted again, by `admit`, before anything is signed.
   */
  unread?: true;
}

/** Pairs of a wallet and a key kept as having had no policy (a bound on the hint's memory, not on correctness). */
export const MAX_UNPOLICED = 10_000;

const pairOf = (request: SigningRequest) => `${request.walletId}\u0000${request.apiKeyId}`;

export interface PolicyGuardOptions {
  store: Store;
  policies: PolicyStore;
  /** Runs a transaction before it is signed, for policies with a `simulation` rule. */
  simulate?: (request: SigningRequest) => Promise<Simulation>;
  /** Whether `address` is chaingate's message endpoint on `chainId` (known once system contracts resolve). */
  isEndpoint?: (chainId: number, address: string) => boolean;
  now?: () => number;
}

export function policyDenied(denial: Denial): ChaingateError {
  return new ChaingateError(
    `refused by policy "${denial.policyName}" (rule ${denial.rule}): ${denial.reason}; nothing was signed`,
    {
      code: "POLICY_DENIED",
      data: {
        rule: denial.rule,
        policy_id: denial.policyId,
        policy_name: denial.policyName,
        reason: denial.reason,
        ...denial.details,
      },
    },
  );
}

/** Thrown inside the signing transaction so that it rolls back; audited once it has. */
export class DailyLimitDenied extends Error {
  constructor(readonly denial: Denial) {
    super(denial.reason);
  }
}

export class PolicyGuard {
  private readonly now: () => number;
  /** Wallet and key pairs whose policies, when last read, were none (see `admitLater`). */
  private readonly unpoliced = new Set<string>();
  isEndpoint: (chainId: number, address: string) => boolean;

  constructor(private readonly options: PolicyGuardOptions) {
    this.now = options.now ?? Date.now;
    this.isEndpoint = options.isEndpoint ?? (() => false);
  }

  /**
   * What `admit` would decide, without auditing or refusing anything (eth_fillTransaction's dry run):
   * the rules that need no counting. Rolling limits are counted only when a signature is made.
   */
  async judge(request: SigningRequest): Promise<Denial | undefined> {
    const { policies, facts } = await this.factsOf(request);
    return checkTransaction(policies, facts);
  }

  private async factsOf(request: SigningRequest) {
    const policies = await this.options.policies.applying(request.walletId, request.apiKeyId);
    const pair = pairOf(request);
    if (policies.length > 0) this.unpoliced.delete(pair);
    else {
      if (this.unpoliced.size >= MAX_UNPOLICED) this.unpoliced.clear();
      this.unpoliced.add(pair);
    }
    return { policies, facts: this.transactionFacts(request) };
  }

  private transactionFacts(request: SigningRequest): TransactionFacts {
    const to = request.to?.toLowerCase() ?? null;
    const toEndpoint = to !== null && this.isEndpoint(request.chainId, to);
    return {
      chainId: request.chainId,
      to,
      value: request.value,
      gas: request.gas,
      feePerGas: request.feePerGas,
      call: decodeCall(to, request.data, toEndpoint),
      toEndpoint,
    };
  }

  /**
   * An admission whose policies are read later, in the signing transaction (on PostgreSQL by its
   * first statement, a round trip fewer, decision 179; on SQLite no read and turn of their own
   * before the group, decision 211), for a request whose wallet and key had no
   * policy when last read; undefined otherwise. With no policy there is nothing to deny, simulate
   * or count, so `admit` would answer the same admission. Where the statement finds a policy the
   * request is admitted again, by `admit`, before anything is signed (see Admission.unread). Read
   * in the transaction, the policies are still those committed before the request arrived, or
   * later ones (decision 159).
   */
  admitLater(request: SigningRequest): Admission | undefined {
    if (!this.unpoliced.has(pairOf(request))) return undefined;
    return { request, facts: this.transactionFacts(request), limits: [], unread: true };
  }

  /**
   * The `simulation` rule: the transaction is run first (a fee bump of one already judged is not).
   * A node that cannot simulate or call is a fault (NODE_UNAVAILABLE), never a pass.
   */
  private async simulated(
    policies: readonly Policy[],
    request: SigningRequest,
    facts: TransactionFacts,
  ): Promise<Denial | undefined> {
    if (!wantsSimulation(policies) || request.operation === "replacement" || !this.options.simulate)
      return undefined;
    const simulation = await this.options.simulate(request);
    return checkSimulation(policies, simulation, request.address, facts.call);
  }

  /** The rules that need no counting; a refusal is audited (and announced) before it is thrown. */
  async admit(request: SigningRequest): Promise<Admission> {
    const { policies, facts } = await this.factsOf(request);
    const denial = checkTransaction(policies, facts) ?? (await this.simulated(policies, request, facts));
    if (denial) {
      await this.refused({ request, facts, limits: [] }, denial);
      throw policyDenied(denial);
    }
    return { request, facts, limits: dailyLimits(policies, facts) };
  }

  /**
   * Inside the transaction that holds the address's nonce row: what the policy's whole scope (the
   * wallet's every address on every chain, or everything its key signs) sent in the last 24 h plus
   * this request must stay within each rolling limit. The scope's row (the wallet, or the key) is
   * locked first, so two addresses of one wallet, on any instance, cannot both pass the last allowance.
   */
  async withinDay(trx: Kysely<Database>, admission: Admission): Promise<void> {
    const since = this.now() - DAY_MS;
    const spent = new Map<string, bigint>();
    const locked = new Set<string>();
    for (const limit of admission.limits) {
      const { scope } = limit;
      const key = `${scope.kind}:${scope.id}:${limit.asset}`;
      if (!locked.has(`${scope.kind}:${scope.id}`)) {
        await this.lockScope(trx, scope);
        locked.add(`${scope.kind}:${scope.id}`);
      }
      let total = spent.get(key);
      if (total === undefined) {
        const rows = await trx
          .selectFrom("policy_spends as s")
          .leftJoin("transactions as t", "t.id", "s.tx_id")
          .select("s.amount")
          .$if(scope.kind === "wallet", (q) => q.where("s.wallet_id", "=", scope.id))
          .$if(scope.kind === "key", (q) => q.where("s.api_key_id", "=", scope.id))
          .where("s.asset", "=", limit.asset)
          .where("s.created_at", ">", since)
          // A transaction refused before it reached a node (or reverted) moved nothing.
          .where((eb) => eb.or([eb("t.state", "is", null), eb("t.state", "!=", "failed")]))
          .execute();
        total = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
        spent.set(key, total);
      }
      if (total + limit.amount > limit.limit) {
        const where =
          scope.kind === "wallet" ? "the wallet sent (all its addresses, all chains)" : "the key signed";
        throw new DailyLimitDenied({
          policyId: limit.policyId,
          policyName: limit.policyName,
          rule: limit.rule,
          reason: `${total} ${where} in the last 24 h plus ${limit.amount} is above ${limit.limit}${
            limit.asset === "native" ? " wei" : ` of ${limit.asset}`
          }`,
        });
      }
    }
  }

  /** Serialises the scope's signers on PostgreSQL (SQLite has one writer): its row, locked to the end of the transaction. */
  private async lockScope(trx: Kysely<Database>, scope: DailyLimit["scope"]): Promise<void> {
    if (this.options.store.kind !== "postgres") return;
    if (scope.kind === "wallet")
      await trx.selectFrom("wallets").select("id").where("id", "=", scope.id).forUpdate().execute();
    else await trx.selectFrom("api_keys").select("id").where("id", "=", scope.id).forUpdate().execute();
  }

  /** In the signing transaction: what it spends (for later rolling sums) and the "allowed" entry. */
  async allowed(
    trx: Kysely<Database>,
    admission: Admission,
    txId: string | null,
    txHash: string | null,
  ): Promise<void> {
    const { request, facts, limits } = admission;
    const now = this.now();
    // Only an asset some rolling limit of this request counts is written down (decision 138): a
    // wallet without one pays no row, and a limit counts what was sent from the time it exists.
    const counted = new Set(limits.map((l) => l.asset));
    const spends: { asset: string; amount: bigint }[] = [];
    if (request.value > 0n && counted.has("native")) spends.push({ asset: "native", amount: request.value });
    if (facts.call.token && counted.has(facts.call.token.token))
      spends.push({ asset: facts.call.token.token, amount: facts.call.token.amount });
    // Replacements repeat a spend already counted.
    if (request.operation !== "replacement" && spends.length > 0) {
      for (const s of spends)
        await insertRow(trx, "policy_spends", {
          id: rowId(now),
          chain_id: request.chainId,
          address: request.address.toLowerCase(),
          asset: s.asset,
          amount: s.amount.toString(),
          tx_id: txId,
          wallet_id: request.walletId,
          api_key_id: request.apiKeyId,
          created_at: now,
        });
    }
    await appendAudit(trx, this.entryOf(admission, "allowed", txHash), now);
  }

  /**
   * `allowed` for requests that spend nothing any limit counts (a joined record's, see
   * tx/record-together.ts): their "allowed" entries, for the record to write with its rows.
   */
  allowedRows(decisions: readonly { admission: Admission; txHash: string }[]): InsertPart<"audit_log"> {
    for (const { admission } of decisions)
      if (admission.limits.length > 0)
        throw new Error("a request with a rolling limit is recorded on its own");
    return auditRows(
      decisions.map(({ admission, txHash }) => this.entryOf(admission, "allowed", txHash)),
      this.now(),
    );
  }

  /** A refusal: audited and announced (policy.denied) in one transaction. */
  async refused(admission: Admission, denial: Denial): Promise<void> {
    const now = this.now();
    await this.options.store.db.transaction().execute(async (trx) => {
      await appendAudit(
        trx,
        { ...this.entryOf(admission, "denied"), rule: denial.rule, policyId: denial.policyId },
        now,
      );
      await recordEvent(
        trx,
        {
          owner: admission.request.apiKeyId,
          type: "policy.denied",
          orderKey: `denial:${randomUUID()}`,
          data: {
            operation: admission.request.operation,
            chain_id: admission.request.chainId,
            wallet_id: admission.request.walletId,
            address: admission.request.address,
            to: admission.request.to,
            value: admission.request.value.toString(),
            rule: denial.rule,
            policy_id: denial.policyId,
            reason: denial.reason,
          },
        },
        now,
      );
    });
  }

  /** eth_sign, personal_sign, eth_signTypedData_v4: checked and audited; throws POLICY_DENIED. */
  async message(
    request: {
      apiKeyId: string | null;
      walletId: string;
      address: string;
      operation: string;
      chainId: number;
    },
    facts: MessageFacts,
  ): Promise<void> {
    const policies: Policy[] = await this.options.policies.applying(request.walletId, request.apiKeyId);
    const denial = checkMessage(policies, facts);
    const base = {
      apiKeyId: request.apiKeyId,
      operation: request.operation,
      walletId: request.walletId,
      address: request.address,
      chainId: request.chainId,
      ...(facts.domain ? { detail: { domain: facts.domain } } : {}),
      ...(facts.delegation
        ? {
            detail: {
              delegate: facts.delegation.delegate,
              authorization_chain_id: facts.delegation.chainId,
              authorization_nonce: facts.delegation.nonce,
            },
          }
        : {}),
    };
    if (!denial) {
      await appendAudit(this.options.store.db, { ...base, decision: "allowed" }, this.now());
      return;
    }
    await this.options.store.db.transaction().execute(async (trx) => {
      await appendAudit(trx, { ...base, decision: "denied", rule: denial.rule, policyId: denial.policyId });
      await recordEvent(trx, {
        owner: request.apiKeyId,
        type: "policy.denied",
        orderKey: `denial:${randomUUID()}`,
        data: {
          operation: request.operation,
          chain_id: request.chainId,
          wallet_id: request.walletId,
          address: request.address,
          rule: denial.rule,
          policy_id: denial.policyId,
          reason: denial.reason,
        },
      });
    });
    throw policyDenied(denial);
  }

  /**
   * The request's audit entry. The decision and the hash are written in, not spread over it after:
   * V8 (Node 20) builds `{ ...o, more }` through a slow path, and a signed transaction makes one.
   */
  private entryOf(admission: Admission, decision: AuditDecision, txHash: string | null = null): AuditEntry {
    const { request, facts } = admission;
    return {
      decision,
      txHash,
      apiKeyId: request.apiKeyId,
      operation: request.operation,
      walletId: request.walletId,
      address: request.address,
      chainId: request.chainId,
      to: request.to,
      value: request.value,
      token: facts.call.token?.token ?? null,
      tokenAmount: facts.call.token?.amount ?? null,
      selector: facts.call.selector,
    };
  }
}
