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

/** Unlocked on another instance of the cluster, which could not share it: the caller learns why, and what to do. */
export function unlockedElsewhere(
  address: string,
  why: "elsewhere" | "seal_key_mismatch" | "no_server_key",
): ChaingateError {
  if (why === "seal_key_mismatch")
    return new ChaingateError(
      "this address was unlocked on another instance under another server key: every instance sharing the store must hold the same server key (CHAINGATE_SEAL_KEY_FILE)",
      { code: "SEAL_KEY_MISMATCH", data: { address } },
    );
  return new ChaingateError(
    why === "elsewhere"
      ? "this address is unlocked on another instance only: without a server key (CHAINGATE_SEAL_KEY_FILE) on every instance an unlock holds where it was made; send the password with the request, or give every instance the same server key"
      : "this address is unlocked on another instance, but this instance has no server key to open the unlock: start it with the same CHAINGATE_SEAL_KEY_FILE as the others",
    { code: "UNLOCKED_ELSEWHERE", data: { address } },
  );
}
