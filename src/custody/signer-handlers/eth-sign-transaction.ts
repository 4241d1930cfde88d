/** eth_signTransaction: a transaction signed (not sent) through the pipeline, its bytes held as its nonce's one payload. */
import type { TransactionObject } from "../transaction-request.js";
import type { SignerHandler } from "./handler.js";

export const ethSignTransaction: SignerHandler = (kit, chain, params, { owner }) => {
  const tx = params[0] as TransactionObject;
  return kit.forNodeOr(chain, "eth_signTransaction", params, owner, tx.from, async () => {
    const op = await kit.operation(chain, tx, owner);
    return (await kit.options.pipeline.signOnly(op)).raw;
  });
};
