/** Policies as stored: created, listed, deleted by admins, each change written to the audit log with it. */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { appendAudit } from "../audit/audit-log.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import { PreparedQuery } from "../store/prepared-query.js";
import type { Database, PoliciesTable } from "../store/schema.js";
import type { Policy, PolicyRules } from "./policy-rules.js";

export interface NewPolicy {
  name: string;
  wallet_id?: string | undefined;
  api_key_id?: string | undefined;
  rules: PolicyRules;
}

const toPolicy = (row: PoliciesTable): Policy => ({
  id: row.id,
  name: row.name,
  wallet_id: row.wallet_id,
  api_key_id: row.api_key_id,
  rules: JSON.parse(row.rules) as PolicyRules,
  created_by: row.created_by,
  created_at: new Date(Number(row.created_at)).toISOString(),
});

const invalidPolicy = (message: string) => new ChaingateError(message, { code: "INVALID_POLICY" });

/** A policy's columns, named: a statement run by name must not take its result from `*` (store/named-statements.ts). */
const COLUMNS = ["id", "name", "wallet_id", "api_key_id", "rules", "created_by", "created_at"] as const;

/** The policies bound to a wallet, a key, or either (every signature reads one: compiled once, see PreparedQuery). */
const BY_WALLET = new PreparedQuery((db, slot) =>
  db.selectFrom("policies").select(COLUMNS).where("wallet_id", "=", slot<string>(0)).orderBy("created_at"),
);
const BY_KEY = new PreparedQuery((db, slot) =>
  db.selectFrom("policies").select(COLUMNS).where("api_key_id", "=", slot<string>(0)).orderBy("created_at"),
);
const BY_WALLET_OR_KEY = new PreparedQuery((db, slot) =>
  db
    .selectFrom("policies")
    .select(COLUMNS)
    .where((eb) => eb.or([eb("wallet_id", "=", slot<string>(0)), eb("api_key_id", "=", slot<string>(1))]))
    .orderBy("created_at"),
);

/** The rows that may bind a request of this wallet and key (at least one of the two is not null). */
function boundTo(db: Kysely<Database>, walletId: string | null, apiKeyId: string | null) {
  return apiKeyId === null
    ? BY_WALLET.execute(db, [walletId])
    : walletId === null
      ? BY_KEY.execute(db, [apiKeyId])
      : BY_WALLET_OR_KEY.execute(db, [walletId, apiKeyId]);
}

/** Whether a policy row binds a request of this wallet and key: bound to no other wallet or key. */
const applies = (row: PoliciesTable, walletId: string | null, apiKeyId: string | null): boolean =>
  (row.wallet_id === null || row.wallet_id === walletId) &&
  (row.api_key_id === null || row.api_key_id === apiKeyId);

/**
 * Whether any policy applies to a request of this wallet and key, read with `db` (a signing
 * transaction's, decision 211): the rows and the rule `PolicyStore.applying` reads and filters by.
 */
export async function anyPolicyApplies(
  db: Kysely<Database>,
  walletId: string | null,
  apiKeyId: string | null,
): Promise<boolean> {
  if (walletId === null && apiKeyId === null) return false;
  const { rows } = await boundTo(db, walletId, apiKeyId);
  return rows.some((row) => applies(row, walletId, apiKeyId));
}

/** One (wallet, key) asked for in a turn, and the callers waiting for its rows. */
interface Ask {
  walletId: string | null;
  apiKeyId: string | null;
  rows: Promise<PoliciesTable[]>;
  settle: { resolve: (rows: PoliciesTable[]) => void; reject: (error: unknown) => void };
}

export class PolicyStore {
  /** The reads asked for in this turn, by (wallet, key); read together once the turn is over. */
  private turn: Map<string, Ask> | undefined;

  constructor(private readonly store: Store) {}

  async create(input: NewPolicy, by: string | null): Promise<Policy> {
    if (input.wallet_id === undefined && input.api_key_id === undefined) {
      throw invalidPolicy("a policy must name a wallet_id, an api_key_id, or both");
    }
    // A typo in an id would bind nothing and protect nothing: refuse it.
    if (input.wallet_id !== undefined) {
      const wallet = await this.store.db
        .selectFrom("wallets")
        .select("id")
        .where("id", "=", input.wallet_id)
        .executeTakeFirst();
      if (!wallet) throw invalidPolicy(`no wallet with id ${input.wallet_id}`);
    }
    if (input.api_key_id !== undefined) {
      const key = await this.store.db
        .selectFrom("api_keys")
        .select("id")
        .where("id", "=", input.api_key_id)
        .executeTakeFirst();
      if (!key) throw invalidPolicy(`no API key with id ${input.api_key_id}`);
    }
    const row: PoliciesTable = {
      id: randomUUID(),
      name: input.name,
      wallet_id: input.wallet_id ?? null,
      api_key_id: input.api_key_id ?? null,
      rules: JSON.stringify(input.rules),
      created_by: by,
      created_at: Date.now(),
    };
    await this.store.db.transaction().execute(async (trx) => {
      await trx.insertInto("policies").values(row).execute();
      await appendAudit(trx, {
        apiKeyId: by,
        operation: "policy.create",
        decision: "change",
        policyId: row.id,
        walletId: row.wallet_id,
        detail: { name: row.name, api_key_id: row.api_key_id, rules: input.rules },
      });
    });
    return toPolicy(row);
  }

  async list(): Promise<Policy[]> {
    const rows = await this.store.db.selectFrom("policies").selectAll().orderBy("created_at").execute();
    return rows.map(toPolicy);
  }

  async get(id: string): Promise<Policy> {
    const row = await this.store.db
      .selectFrom("policies")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (!row) throw new ChaingateError(`no policy with id ${id}`, { code: "POLICY_NOT_FOUND" });
    return toPolicy(row);
  }

  async delete(id: string, by: string | null): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("policies").selectAll().where("id", "=", id).executeTakeFirst();
      if (!row) throw new ChaingateError(`no policy with id ${id}`, { code: "POLICY_NOT_FOUND" });
      await trx.deleteFrom("policies").where("id", "=", id).execute();
      await appendAudit(trx, {
        apiKeyId: by,
        operation: "policy.delete",
        decision: "change",
        policyId: id,
        walletId: row.wallet_id,
        detail: { name: row.name, api_key_id: row.api_key_id, rules: JSON.parse(row.rules) },
      });
    });
  }

  /**
   * Every policy bound to this wallet or this key (a policy naming both needs both). Every signature
   * asks, and on PostgreSQL each ask was a round trip (most of a burst's statements): the asks of
   * one turn for the same wallet and key share one read, made after the turn (setImmediate, as the
   * group commit's jobs). That read begins after every caller that shares it was called, so each
   * sees every policy committed before its request arrived, on any instance; no answer is kept
   * past its turn. Each caller gets its own policy objects.
   */
  async applying(walletId: string | null, apiKeyId: string | null): Promise<Policy[]> {
    if (walletId === null && apiKeyId === null) return [];
    let turn = this.turn;
    if (turn === undefined) {
      const asked = new Map<string, Ask>();
      this.turn = turn = asked;
      setImmediate(() => {
        this.turn = undefined;
        for (const ask of asked.values()) this.read(ask);
      });
    }
    const key = `${walletId}\u0000${apiKeyId}`;
    let ask = turn.get(key);
    if (ask === undefined) {
      let settle!: Ask["settle"];
      const rows = new Promise<PoliciesTable[]>((resolve, reject) => {
        settle = { resolve, reject };
      });
      ask = { walletId, apiKeyId, rows, settle };
      turn.set(key, ask);
    }
    return (await ask.rows).filter((row) => applies(row, walletId, apiKeyId)).map(toPolicy);
  }

  private read({ walletId, apiKeyId, settle }: Ask): void {
    boundTo(this.store.db, walletId, apiKeyId).then(({ rows }) => settle.resolve(rows), settle.reject);
  }
}
