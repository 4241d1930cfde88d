/** eth_sendTransactionSync: eth_sendTransaction, then its receipt within the caller's timeout. */
import { awaitReceipt, syncTimeoutMs } from "../../rpc/send-raw.js";
import { checkedResult } from "../../upstream/node-reads.js";
import type { TransactionObject } from "../transaction-request.js";
import type { SignerHandler } from "./handler.js";

export const ethSendTransactionSync: SignerHandler = async (kit, chain, params, context) => {
  const tx = params[0] as TransactionObject;
  const timeoutMs = syncTimeoutMs(params[1], kit.options.syncSend);
  // The node's own accounts (devnet switch) send with the node's eth_sendTransaction, then wait alike.
  const hash = checkedResult(
    "eth_sendTransaction",
    await kit.forNodeOr(chain, "eth_sendTransaction", [tx], context.owner, tx.from, () =>
      // One Idempotency-Key space with eth_sendTransaction: a retry of either replays the one send.
      kit.send(chain, tx, context),
    ),
  );
  return awaitReceipt(chain, hash, timeoutMs);
};
