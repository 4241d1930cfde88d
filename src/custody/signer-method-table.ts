/** Every custody signer method: a row with what it needs and its handler (one file each in signer-handlers/); adding one is a file and a row. */
import { ethAccounts } from "./signer-handlers/eth-accounts.js";
import { ethFillTransaction } from "./signer-handlers/eth-fill-transaction.js";
import { ethSendTransaction } from "./signer-handlers/eth-send-transaction.js";
import { ethSendTransactionSync } from "./signer-handlers/eth-send-transaction-sync.js";
import { ethSign } from "./signer-handlers/eth-sign.js";
import { ethSignAuthorization } from "./signer-handlers/eth-sign-authorization.js";
import { ethSignTransaction } from "./signer-handlers/eth-sign-transaction.js";
import { ethSignTypedDataV4 } from "./signer-handlers/eth-sign-typed-data-v4.js";
import type { SignerHandler } from "./signer-handlers/handler.js";
import { personalLockAccount } from "./signer-handlers/personal-lock-account.js";
import { personalSign } from "./signer-handlers/personal-sign.js";
import { personalUnlockAccount } from "./signer-handlers/personal-unlock-account.js";
import { walletGetCallsStatus } from "./signer-handlers/wallet-get-calls-status.js";
import { walletGetCapabilities } from "./signer-handlers/wallet-get-capabilities.js";
import { walletSendCalls } from "./signer-handlers/wallet-send-calls.js";

/**
 * What a method needs of custody before it answers: `unlock` (a signing account: unlocked,
 * unattended, a password in the call, or an HSM key), `policy` (its signature asks the policy
 * guard), `nonce` (it takes or holds a nonce of the address). The params are the method table's
 * (rpc/method-rows-custody.ts), validated before the handler runs.
 */
export type SignerNeed = "unlock" | "policy" | "nonce";

export interface SignerRow {
  needs: readonly SignerNeed[];
  handle: SignerHandler;
}

export const SIGNER_METHODS: Readonly<Record<string, SignerRow>> = {
  eth_accounts: { needs: [], handle: ethAccounts },
  eth_sign: { needs: ["unlock", "policy"], handle: ethSign },
  personal_sign: { needs: ["unlock", "policy"], handle: personalSign },
  eth_signTypedData_v4: { needs: ["unlock", "policy"], handle: ethSignTypedDataV4 },
  eth_signTransaction: { needs: ["unlock", "policy", "nonce"], handle: ethSignTransaction },
  eth_sendTransaction: { needs: ["unlock", "policy", "nonce"], handle: ethSendTransaction },
  eth_sendTransactionSync: { needs: ["unlock", "policy", "nonce"], handle: ethSendTransactionSync },
  eth_signAuthorization: { needs: ["unlock", "policy"], handle: ethSignAuthorization },
  eth_fillTransaction: { needs: ["policy"], handle: ethFillTransaction },
  wallet_getCapabilities: { needs: [], handle: walletGetCapabilities },
  wallet_sendCalls: { needs: ["unlock", "policy", "nonce"], handle: walletSendCalls },
  wallet_getCallsStatus: { needs: [], handle: walletGetCallsStatus },
  personal_unlockAccount: { needs: [], handle: personalUnlockAccount },
  personal_lockAccount: { needs: [], handle: personalLockAccount },
};
