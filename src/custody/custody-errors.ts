/** Errors of the custody signer, with geth's messages (and its -32000) where clients already match them. */
import { ChaingateError } from "../errors/chaingate-error.js";

/** Not one of the caller's custody addresses: another tenant's address answers exactly the same. */
export function unknownAccount(): ChaingateError {
  return new ChaingateError("unknown account", {
    code: "UNKNOWN_ACCOUNT",
  });
}

export function accountLocked(address: string): ChaingateError {
  return new ChaingateError(
    "authentication needed: password or unlock (personal_unlockAccount, or POST /wallet/{id}/unlock)",
    { code: "ACCOUNT_LOCKED", data: { address } },
  );
}

export function unattendedUnavailable(): ChaingateError {
  return new ChaingateError(
    "unattended wallets need a server key: start chaingate with CHAINGATE_SEAL_KEY_FILE",
    { code: "UNATTENDED_UNAVAILABLE" },
  );
}

/** The key was sealed under another server key than the one this process holds. */
export function sealKeyMismatch(address: string): ChaingateError {
  return new ChaingateError(
    "this unattended address was sealed under another server key; restore that key or make the wallet unattended again",
    { code: "SEAL_KEY_MISMATCH", data: { address } },
  );
}

/** An unattended address met by an instance started without any server key (not the wrong one). */
export function noServerKey(address: string): ChaingateError {
  return new ChaingateError(
    "this address is unattended, but this instance has no server key configured: start it with CHAINGATE_SEAL_KEY_FILE (the key the address was sealed under), or unlock the address",
    { code: "UNATTENDED_UNAVAILABLE", data: { address } },
  );
}
