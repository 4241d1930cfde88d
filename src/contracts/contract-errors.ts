/** Turns reverts of chaingate's own contracts into errors a user can act on, each with a stable code. */
import { type Abi, decodeErrorResult, type Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { type ErrorCode, RPC_TX_REJECTED } from "../errors/codes.js";
import { revertReason } from "../tx/tx-errors.js";
import { BridgeERC20, BridgeERC721, MemberRegistry, MessageEndpoint } from "./artifacts.generated.js";

const ERRORS_ABI = [
  ...MemberRegistry.abi,
  ...MessageEndpoint.abi,
  ...BridgeERC20.abi,
  ...BridgeERC721.abi,
].filter((item) => item.type === "error") as Abi;

type Describe = (args: readonly unknown[]) => { code: ErrorCode; message: string };

/** The reverts a caller can cause, in words; any other custom error is named as the contract names it. */
const DESCRIPTIONS: Record<string, Describe> = {
  ERC20InsufficientBalance: ([, balance, needed]) => ({
    code: "INSUFFICIENT_TOKEN_BALANCE",
    message: `amount ${needed} is more than the sender's balance of ${balance}`,
  }),
  ERC721NonexistentToken: ([id]) => ({
    code: "TOKEN_ID_NOT_FOUND",
    message: `token id ${id} does not exist`,
  }),
  ERC721IncorrectOwner: ([sender, id]) => ({
    code: "NOT_TOKEN_OWNER",
    message: `${sender} does not own token id ${id}`,
  }),
  ERC721InsufficientApproval: ([sender, id]) => ({
    code: "NOT_TOKEN_OWNER",
    message: `${sender} does not own token id ${id} and is not approved for it`,
  }),
  NotTokenOwner: ([from, id]) => ({
    code: "NOT_TOKEN_OWNER",
    message: `${from} does not own token id ${id}`,
  }),
  ERC721InvalidSender: () => ({ code: "TOKEN_ID_TAKEN", message: "a token with that id exists already" }),
  NameTaken: ([name]) => ({
    code: "MEMBER_NAME_TAKEN",
    message: `a member named "${name}" is registered already`,
  }),
  UnknownToken: ([token]) => ({
    code: "TOKEN_NOT_TRANSPORTABLE",
    message: `${token} was not created by chaingate's endpoint, so it cannot be transported`,
  }),
  ZeroAmount: () => ({ code: "INVALID_AMOUNT", message: "amount must be greater than 0" }),
  SameChain: () => ({ code: "SAME_CHAIN", message: "the destination chain is the source chain" }),
};

export function decodeContractError(data: unknown): { name: string; args: readonly unknown[] } | undefined {
  if (typeof data !== "string" || !/^0x[0-9a-fA-F]{8,}$/.test(data)) return undefined;
  try {
    const decoded = decodeErrorResult({ abi: ERRORS_ABI, data: data as Hex });
    return { name: decoded.errorName, args: decoded.args ?? [] };
  } catch {
    return undefined;
  }
}

/** The revert data an EXECUTION_REVERTED error carries (as the node gave it), if any. */
export function revertDataOf(error: unknown): string | undefined {
  if (!(error instanceof ChaingateError) || error.code !== "EXECUTION_REVERTED") return undefined;
  const data = (error.data as { revert_data?: unknown } | undefined)?.revert_data;
  return typeof data === "string" ? data : undefined;
}

/**
 * Rewrites an EXECUTION_REVERTED error from the pipeline with the reason in words: our contracts' errors
 * as what the caller can do about them, any other `Error(string)`, panic or custom error decoded.
 * The raw revert data stays in `data.revert_data`. Others pass.
 */
export function explainRevert(error: unknown): unknown {
  if (!(error instanceof ChaingateError) || error.code !== "EXECUTION_REVERTED") return error;
  const revertData = revertDataOf(error);
  const decoded = decodeContractError(revertData);
  const reason = revertReason(revertData, ERRORS_ABI);
  const described = decoded === undefined ? undefined : DESCRIPTIONS[decoded.name]?.(decoded.args);
  if (described === undefined && reason === undefined) return error;
  return new ChaingateError(described?.message ?? `execution reverted: ${reason}`, {
    code: described?.code ?? "EXECUTION_REVERTED",
    // A revert is a refused transaction whatever it means: 422 / -32010, as EXECUTION_REVERTED is.
    status: 422,
    rpcCode: RPC_TX_REJECTED,
    cause: error,
    data: { reason: decoded?.name ?? reason, revert_data: revertData },
  });
}
