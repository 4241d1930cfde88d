/** The one way chaingate's operator key signs: system deployments, member registrations and the relayer's calls. */
import type { Hex, LocalAccount } from "viem";
import type { Submitted, TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain } from "../upstream/chain-registry.js";

export interface OperatorCall {
  chain: Chain;
  to: Hex;
  data: Hex;
  kind: string;
  metadata?: Record<string, unknown>;
  /** The transport the call delivers, cancels or refunds. */
  transportId?: string;
  /** The tenant that asked for it (member registrations); the relayer's own calls have none. */
  owner?: string | null;
  /** The Idempotency-Key reference of the request that asked for it (member registrations). */
  idempotencyRef?: string | undefined;
}

/** Through the same pipeline as every wallet: one nonce ledger, stored before sent, tracked after. */
export function submitAsOperator(
  pipeline: TransactionPipeline,
  operator: LocalAccount,
  call: OperatorCall,
): Promise<Submitted> {
  return pipeline.submit({ ...call, account: operator, walletId: null, addressIndex: null, value: 0n });
}
