/** Creates, lists and revokes API keys; a key is shown once, at creation, and only its hash is stored. */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { appendAudit } from "../audit/audit-log.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { ApiKeyRole } from "../store/schema.js";

export const KEY_PREFIX = "cg_";

export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export interface ApiKeyInfo {
  id: string;
  name: string;
  role: ApiKeyRole;
  created_at: string;
  revoked_at: string | null;
}

export class ApiKeyStore {
  constructor(private readonly store: Store) {}

  /** `by`: the admin key that made it, or null (the CLI, run by whoever holds the store). */
  async create(
    role: ApiKeyRole,
    name: string,
    by: string | null = null,
  ): Promise<{ id: string; key: string; role: ApiKeyRole }> {
    const id = randomUUID();
    const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
    await this.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("api_keys")
        .values({ id, name, role, key_hash: hashKey(key), created_at: Date.now(), revoked_at: null })
        .execute();
      await appendAudit(trx, {
        apiKeyId: by,
        operation: "key.create",
        decision: "change",
        detail: { id, name, role },
      });
    });
    await this.changed();
    return { id, key, role };
  }

  /** Every instance on the store (and this one) reads the keys again now, not at its next refresh. */
  private async changed(): Promise<void> {
    await this.store.bus.publish({ kind: "keys" }).catch(() => {
      // The key rings' own refresh (twice a second) catches it up.
    });
  }

  /** Called when any instance (or the CLI) changed the keys. */
  onChange(listener: () => void): () => void {
    return this.store.bus.on("keys", listener);
  }

  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.store.db.selectFrom("api_keys").selectAll().orderBy("created_at").execute();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      role: row.role,
      created_at: new Date(row.created_at).toISOString(),
      revoked_at: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
    }));
  }

  async revoke(id: string, by: string | null = null): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("api_keys")
        .set({ revoked_at: Date.now() })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) {
        throw new ChaingateError(`no active key with id ${id}`, { code: "KEY_NOT_FOUND" });
      }
      await appendAudit(trx, { apiKeyId: by, operation: "key.revoke", decision: "change", detail: { id } });
    });
    await this.changed();
  }

  /** Active keys by hash: what the key ring holds in memory. */
  async active(): Promise<Map<string, { id: string; role: ApiKeyRole }>> {
    const rows = await this.store.db
      .selectFrom("api_keys")
      .select(["id", "role", "key_hash"])
      .where("revoked_at", "is", null)
      .execute();
    return new Map(rows.map((row) => [row.key_hash, { id: row.id, role: row.role }]));
  }
}
