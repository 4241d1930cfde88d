/** The wallet group's errors (statuses and JSON-RPC codes in errors/codes.ts). */
import { ChaingateError } from "../errors/chaingate-error.js";

export function walletNotFound(id: string): ChaingateError {
  return new ChaingateError(`Wallet ${id} not found`, {
    code: "WALLET_NOT_FOUND",
  });
}

export function addressNotFound(id: string, index: number): ChaingateError {
  return new ChaingateError(`Wallet ${id} has no address at index ${index}`, {
    code: "ADDRESS_NOT_FOUND",
  });
}

export function walletLocked(retryAfterSeconds: number): ChaingateError {
  return new ChaingateError(`Too many wrong passwords for this wallet; retry in ${retryAfterSeconds} s`, {
    code: "WALLET_LOCKED",
    data: { retry_after_seconds: retryAfterSeconds },
  });
}
