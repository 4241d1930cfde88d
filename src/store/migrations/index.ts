/** The ordered list of migrations; names sort in the order they must run. */
import type { Migration } from "kysely";
import * as filters from "./001-filters.js";
import * as wallets from "./002-wallets.js";
import * as transactions from "./003-transactions.js";
import * as transports from "./004-transports.js";
import * as apiKeys from "./005-api-keys.js";
import * as filterRecent from "./006-filter-recent-blocks.js";
import * as pending from "./007-pending-transactions.js";
import * as refunds from "./008-transport-refunds.js";
import * as idempotencyLeases from "./009-idempotency-leases.js";
import * as filterOwners from "./010-filter-owners.js";
import * as unattendedKeys from "./011-unattended-keys.js";
import * as transportRevertData from "./012-transport-revert-data.js";
import * as transactionTransportId from "./013-transaction-transport-id.js";
import * as policiesAuditWebhooks from "./014-policies-audit-webhooks.js";
import * as partialTransactionIndexes from "./015-partial-transaction-indexes.js";
import * as transportTrust from "./016-transport-trust.js";
import * as attemptLimits from "./017-attempt-limits.js";
import * as policySpendScopes from "./018-policy-spend-scopes.js";
import * as unlocks from "./019-unlocks.js";
import * as instances from "./020-instances.js";
import * as subscriptionStreams from "./021-subscription-streams.js";
import * as signedPayloads from "./022-signed-payloads.js";
import * as callBundles from "./023-call-bundles.js";
import * as heldSlots from "./024-held-slots.js";
import * as unlockInstance from "./025-unlock-instance.js";
import * as traceParents from "./026-trace-parents.js";
import * as stateNonceIndex from "./027-state-nonce-index.js";
import * as recentDropsIndex from "./028-recent-drops-index.js";
import * as hashLookupsBySender from "./029-hash-lookups-by-sender.js";
import * as auditLogOrder from "./030-audit-log-order.js";
import { sqlMigration } from "./sql-migration.js";

export const MIGRATIONS: Record<string, Migration> = {
  "001-filters": sqlMigration(filters),
  "002-wallets": sqlMigration(wallets),
  "003-transactions": sqlMigration(transactions),
  "004-transports": sqlMigration(transports),
  "005-api-keys": sqlMigration(apiKeys),
  "006-filter-recent-blocks": sqlMigration(filterRecent),
  "007-pending-transactions": pending,
  "008-transport-refunds": sqlMigration(refunds),
  "009-idempotency-leases": sqlMigration(idempotencyLeases),
  "010-filter-owners": sqlMigration(filterOwners),
  "011-unattended-keys": sqlMigration(unattendedKeys),
  "012-transport-revert-data": sqlMigration(transportRevertData),
  "013-transaction-transport-id": transactionTransportId,
  "014-policies-audit-webhooks": sqlMigration(policiesAuditWebhooks),
  "015-partial-transaction-indexes": sqlMigration(partialTransactionIndexes),
  "016-transport-trust": sqlMigration(transportTrust),
  "017-attempt-limits": sqlMigration(attemptLimits),
  "018-policy-spend-scopes": sqlMigration(policySpendScopes),
  "019-unlocks": sqlMigration(unlocks),
  "020-instances": sqlMigration(instances),
  "021-subscription-streams": sqlMigration(subscriptionStreams),
  "022-signed-payloads": sqlMigration(signedPayloads),
  "023-call-bundles": sqlMigration(callBundles),
  "024-held-slots": sqlMigration(heldSlots),
  "025-unlock-instance": sqlMigration(unlockInstance),
  "026-trace-parents": sqlMigration(traceParents),
  "027-state-nonce-index": sqlMigration(stateNonceIndex),
  "028-recent-drops-index": sqlMigration(recentDropsIndex),
  "029-hash-lookups-by-sender": sqlMigration(hashLookupsBySender),
  "030-audit-log-order": sqlMigration(auditLogOrder),
};
