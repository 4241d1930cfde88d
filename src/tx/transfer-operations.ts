/** list_all_transfers as a row of the operation table (JSON-RPC envelope in and out). */
import { defineOperation, type Operation } from "../operations/operation.js";
import type { Store } from "../store/database.js";
import { listTransfers, type TransferFilter } from "./list-transfers.js";
import { TransferFilterSchema, TransferPageSchema } from "./transaction-schemas.js";

export function transferOperations(store: Store): Operation[] {
  return [
    defineOperation({
      path: "list_all_transfers",
      tag: "Transactions",
      summary: "Lists the signed transactions chaingate made, newest first (filters and paging optional)",
      description:
        "`result` is `{transfers: [...], next_cursor}`; pass next_cursor back as `cursor` for the next page.",
      params: TransferFilterSchema,
      result: TransferPageSchema,
      signs: false,
      run: (input, context) => listTransfers(store, input as TransferFilter, context.owner),
    }),
  ];
}
