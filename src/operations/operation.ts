/** One row of the Members and Token Management tables: a path, its params schema and what it runs. */
import type { Static, TSchema } from "@sinclair/typebox";

export interface OperationContext {
  /** The tenant (API key) making the call; null when keys are not configured. */
  owner: string | null;
  idempotencyKey: string | undefined;
  /**
   * The stored Idempotency-Key this run is under (tenant-scoped), or undefined without one: every
   * transaction the operation signs carries it, so a crash is resolved from the rows.
   */
  idempotencyRef: string | undefined;
}

export interface Operation<S extends TSchema = TSchema, R extends TSchema = TSchema> {
  /** The path without its slash, spelled as the spec spells it. */
  path: string;
  tag: "Members" | "Token Management" | "Transactions";
  summary: string;
  description?: string;
  /** Schema of the one object in `params` (or of the whole body when it is not an envelope). */
  params: S;
  /** Changes a chain: an Idempotency-Key header makes retries safe. */
  signs: boolean;
  /** Operator actions: refused to a user API key. */
  admin?: boolean;
  /** Schema of `result`: the OpenAPI document's type of it, and what `run` is compiled against. */
  result: R;
  run(input: Static<S>, context: OperationContext): Promise<Static<R>>;
}

/** Keeps each row's input and result types checked while the table holds rows of different schemas. */
export function defineOperation<S extends TSchema, R extends TSchema>(operation: Operation<S, R>): Operation {
  return operation as unknown as Operation;
}
