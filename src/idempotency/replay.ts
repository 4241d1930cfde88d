/** What a retry under a key is answered: the first answer, or, after a cut-off request, what it signed. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { isErrorCode } from "../errors/codes.js";

export type IdempotencyStart = { kind: "new" } | { kind: "replay"; status: number; body: unknown };

/** The answer for a key whose request was cut off (a crash) after it signed: what it signed. */
export type Recover = (txHashes: string[]) => { status: number; body: unknown };

/** For routes whose answer cannot be rebuilt from the transactions alone. */
export const interrupted: Recover = (txHashes) => ({
  status: 409,
  body: {
    error: {
      code: "OPERATION_INTERRUPTED",
      message:
        "the request with this Idempotency-Key was interrupted after signing; its transactions are tracked (see data.tx_hashes)",
      data: { tx_hashes: txHashes },
    },
  },
});

/**
 * A failure kept under a key (signed but not sent, or interrupted), as the error every retry with the
 * key is answered: the code, message and data first answered, with the status stored beside them.
 */
export function replayedError(outcome: { status: number; body: unknown }): ChaingateError {
  const stored = (outcome.body as { error?: { code?: unknown; message?: unknown; data?: unknown } }).error;
  return new ChaingateError(String(stored?.message ?? "the first answer to this Idempotency-Key"), {
    code: isErrorCode(stored?.code) ? stored.code : "INTERNAL",
    status: outcome.status,
    data: stored?.data,
  });
}
