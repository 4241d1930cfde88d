/** One JSON-RPC call answered as envelope text, result or error, within the answer size cap: never throws. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { limitExceeded } from "../filters/log-query.js";
import type { CallContext, RpcDispatcher } from "../rpc/dispatcher.js";
import { errorText, type RequestId, resultAnswer, resultText } from "../rpc/envelope.js";
import type { Chain } from "../upstream/chain-registry.js";
import type { JsonText } from "../upstream/json-text.js";
import type { AnswerAccount } from "./answer-budget.js";

/** The error an answer (or a batch) larger than the cap becomes. */
export function tooLargeText(id: RequestId, what: string, maxResponseBytes: number): string {
  return errorText(
    id,
    limitExceeded(
      "RESPONSE_TOO_LARGE",
      `${what} is larger than ${Math.round(maxResponseBytes / 1048576)} MiB (narrow the query or split the batch)`,
    ),
  );
}

export function answerCall(
  dispatcher: RpcDispatcher,
  chain: Chain,
  id: RequestId,
  method: string,
  params: unknown,
  context: CallContext,
  options: AnswerOptions,
): Promise<string> {
  return answerOf(id, dispatcher.call(chain, method, params, context), options);
}

export interface AnswerOptions {
  maxResponseBytes: number;
  logUnexpected: (error: unknown) => void;
  /** Holds the answer until it is written (and says when it may not); else only the size cap applies. */
  account?: AnswerAccount;
}

/**
 * A call's outcome (already asked) as envelope text, result or error, within the answer size cap:
 * never rejects. Chained, not an async frame: one promise on a forwarded read where the frame made three.
 */
export function answerOf(id: RequestId, outcome: Promise<unknown>, options: AnswerOptions): Promise<string> {
  return outcome.then(
    (result) => {
      try {
        return resultWithin(id, result, options);
      } catch (error) {
        return failureText(id, error, options);
      }
    },
    (error: unknown) => failureText(id, error, options),
  );
}

/**
 * A plain read's outcome (RpcDispatcher.plainRead: always the node's JSON text) as `answerOf` gives
 * it, with the envelope's UTF-8 length where it is known without counting: the result's, when the
 * node's answer was all ASCII, and the envelope's own characters. The cap is on bytes, as a cache
 * hit's is. Never rejects.
 */
export function plainAnswerOf(
  id: RequestId,
  outcome: Promise<JsonText>,
  options: AnswerOptions,
): Promise<{ text: string; byteLength?: number }> {
  return outcome.then(
    (result) => {
      const answer = resultAnswer(id, result);
      return answer.byteLength > options.maxResponseBytes
        ? { text: tooLargeText(id, "the answer", options.maxResponseBytes) }
        : answer;
    },
    (error: unknown) => ({ text: failureText(id, error, options) }),
  );
}

/** A result's envelope, or the refusal it becomes past the cap (or the account's limit). */
function resultWithin(id: RequestId, result: unknown, options: AnswerOptions): string {
  const text = resultText(id, result);
  if (options.account !== undefined) {
    const refusal = options.account.take(text.length);
    return refusal === undefined ? text : errorText(id, refusal);
  }
  return text.length > options.maxResponseBytes
    ? tooLargeText(id, "the answer", options.maxResponseBytes)
    : text;
}

/** A failure's error envelope; one that is not ours is logged first (it is a defect). */
function failureText(id: RequestId, error: unknown, options: AnswerOptions): string {
  if (!(error instanceof ChaingateError)) options.logUnexpected(error);
  return errorText(id, error);
}
