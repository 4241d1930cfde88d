/** The wallet group's errors, each with a stable code, an HTTP status and a JSON-RPC code. */
import { ChaingateError } from "../errors/chaingate-error.js";

/** JSON-RPC codes for wallet failures inside JSON-RPC envelopes (token and member operations). */
export const RPC_WALLET_NOT_FOUND = -32004;
export const RPC_WRONG_PASSWORD = -32001;
export const RPC_WALLET_LOCKED = -32005;

export function walletNotFound(id: string): ChaingateError {
  return new ChaingateError(`Wallet ${id} not found`, {
    code: "WALLET_NOT_FOUND",
    status: 404,
    rpcCode: RPC_WALLET_NOT_FOUND,
  });
}

export function addressNotFound(id: string, index: number): ChaingateError {
  return new ChaingateError(`Wallet ${id} has no address at index ${index}`, {
    code: "ADDRESS_NOT_FOUND",
    status: 404,
    rpcCode: RPC_WALLET_NOT_FOUND,
  });
}

export function walletLocked(retryAfterSeconds: number): ChaingateError {
  return new ChaingateError(`Too many wrong passwords for this wallet; retry in ${retryAfterSeconds} s`, {
    code: "WALLET_LOCKED",
    status: 429,
    rpcCode: RPC_WALLET_LOCKED,
    retryable: true,
    data: { retry_after_seconds: retryAfterSeconds },
  });
}
