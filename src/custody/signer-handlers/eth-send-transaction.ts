/** eth_sendTransaction: signed, recorded and sent through the one pipeline, once per Idempotency-Key. */
import type { TransactionObject } from "../transaction-request.js";
import type { SignerHandler } from "./handler.js";

export const ethSendTransaction: SignerHandler = (kit, chain, params, context) => {
  const tx = params[0] as TransactionObject;
  return kit.forNodeOr(chain, "eth_sendTransaction", params, context.owner, tx.from, () =>
    kit.send(chain, tx, context),
  );
};
