/** wallet_sendCalls (EIP-5792): a bundle of calls from a custody address, sent in order and kept under its id. */
import type { SendCallsRequest } from "../wallet-calls.js";
import type { SignerHandler } from "./handler.js";

export const walletSendCalls: SignerHandler = async (kit, _chain, params, { owner }) =>
  kit.calls.send(owner, params[0] as SendCallsRequest);
