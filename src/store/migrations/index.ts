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

export const MIGRATIONS: Record<string, Migration> = {
  "001-filters": filters,
  "002-wallets": wallets,
  "003-transactions": transactions,
  "004-transports": transports,
  "005-api-keys": apiKeys,
  "006-filter-recent-blocks": filterRecent,
  "007-pending-transactions": pending,
  "008-transport-refunds": refunds,
  "009-idempotency-leases": idempotencyLeases,
  "010-filter-owners": filterOwners,
  "011-unattended-keys": unattendedKeys,
  "012-transport-revert-data": transportRevertData,
  "013-transaction-transport-id": transactionTransportId,
  "014-policies-audit-webhooks": policiesAuditWebhooks,
  "015-partial-transaction-indexes": partialTransactionIndexes,
  "016-transport-trust": transportTrust,
  "017-attempt-limits": attemptLimits,
  "018-policy-spend-scopes": policySpendScopes,
  "019-unlocks": unlocks,
  "020-instances": instances,
  "021-subscription-streams": subscriptionStreams,
  "022-signed-payloads": signedPayloads,
  "023-call-bundles": callBundles,
  "024-held-slots": heldSlots,
  "025-unlock-instance": unlockInstance,
  "026-trace-parents": traceParents,
};
