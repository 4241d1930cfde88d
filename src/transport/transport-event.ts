/** A transport's state-change event: the same record POST /list_all_transports shows. */
import type { TransportsTable } from "../store/schema.js";
import type { EventType } from "../webhooks/event-types.js";
import type { OutboxEvent } from "../webhooks/outbox.js";
import { toTransportRecord } from "./list-transports.js";

export function transportEvent(row: TransportsTable, type: EventType): OutboxEvent {
  return { owner: row.owner, type, orderKey: `transport:${row.id}`, data: { ...toTransportRecord(row) } };
}
