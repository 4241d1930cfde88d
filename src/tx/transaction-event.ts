/** A transaction's state-change event: the same record POST /list_all_transfers shows, never its raw bytes. */
import type { TransactionsTable } from "../store/schema.js";
import type { OutboxEvent } from "../webhooks/outbox.js";
import { toTransferRecord } from "./list-transfers.js";

export function transactionEvent(row: TransactionsTable): OutboxEvent {
  return {
    owner: row.owner,
    type: `transaction.${row.state}`,
    orderKey: `tx:${row.id}`,
    traceParent: row.trace_parent,
    // Built only when a webhook wants the event: most changes have no endpoint to go to.
    get data() {
      return { ...toTransferRecord(row) };
    },
  };
}
