/** How each node implementation words the answers chaingate must tell apart: one row per wording, naming where it comes from. */

/**
 * What a node's error answer means for the call that got it.
 * - reverted: the EVM ran the call and it reverted (the contract's answer; never a node fault)
 * - already_known: this very transaction is in the node's pool already (a resend: a success)
 * - nonce_too_low: the nonce is used (mined) already
 * - nonce_too_high: the nonce leaves a gap (the node will not queue it)
 * - replacement_underpriced: another transaction of the sender holds the nonce in the pool
 * - underpriced: the fee is below what the node or the next block takes
 * - insufficient_funds: the sender cannot pay value + gas
 * - unsupported: the node does not serve the method
 * - limit: the call is larger than the node takes (a block range, a batch, a gas limit over the
 *   block's): the caller's to make smaller; the node is healthy and stays in rotation
 * - fault: the node's own state (overload, rate limit): another node may answer
 * - other: any other refusal of the call (the caller's to fix)
 */
export type NodeErrorKind =
  | "reverted"
  | "already_known"
  | "nonce_too_low"
  | "nonce_too_high"
  | "replacement_underpriced"
  | "underpriced"
  | "insufficient_funds"
  | "unsupported"
  | "limit"
  | "fault"
  | "other";

export interface Wording {
  /** The implementation and release the wording was read from (its source, not a guess). */
  readonly from: string;
  readonly pattern: RegExp;
  /** The kind, or a function of the match where the wording carries the numbers that decide it. */
  readonly kind: NodeErrorKind | ((match: RegExpExecArray) => NodeErrorKind);
}

/**
 * Reverts, in every wording seen: tried before anything else, since a revert's reason is the
 * contract's own text and may read like anything ("rate limit exceeded, timeout").
 */
export const REVERT_WORDINGS: readonly Wording[] = [
  {
    from: "geth 1.14, reth 1.x, Erigon 3, anvil 1.x (code 3)",
    pattern: /execution reverted/i,
    kind: "reverted",
  },
  { from: "Besu 24.x (REVERT_ERROR)", pattern: /^Execution reverted/i, kind: "reverted" },
  {
    from: "Nethermind 1.2x (data 'Reverted 0x...')",
    pattern: /^Reverted\b|VM execution error/i,
    kind: "reverted",
  },
  {
    from: "Hardhat 2 / EDR 0.x",
    pattern:
      /reverted with (reason string|custom error|panic code)|reverted without a reason|Transaction reverted/i,
    kind: "reverted",
  },
  {
    from: "Ganache 7.9, Hardhat 2 (VM_EXCEPTION)",
    pattern: /VM Exception while processing transaction: (revert|reverted)/i,
    kind: "reverted",
  },
];

/** A sender's transaction refused, by implementation. Order matters only where one wording contains another. */
export const SEND_WORDINGS: readonly Wording[] = [
  // Already known: the same bytes are pooled.
  { from: "geth 1.14 ErrAlreadyKnown, reth 1.x, Erigon 3", pattern: /already known/i, kind: "already_known" },
  {
    from: "Besu 24.x ETH_SEND_TX_ALREADY_KNOWN, Hardhat 2",
    pattern: /known transaction/i,
    kind: "already_known",
  },
  {
    from: "anvil 1.x AlreadyImported",
    pattern: /transaction already imported|already imported/i,
    kind: "already_known",
  },
  { from: "Nethermind 1.2x AcceptTxResult.AlreadyKnown", pattern: /\bAlreadyKnown\b/, kind: "already_known" },
  { from: "reth 1.x pool", pattern: /already exists in the (transaction )?pool/i, kind: "already_known" },
  // The nonce is held by another pooled transaction of the sender.
  {
    from: "geth 1.14 ErrReplaceUnderpriced, reth, Erigon, Besu, Hardhat",
    pattern: /replacement (transaction )?underpriced/i,
    kind: "replacement_underpriced",
  },
  {
    from: "Nethermind 1.2x OwnNonceAlreadyUsed, ReplacementNotAllowed",
    pattern: /\b(OwnNonceAlreadyUsed|ReplacementNotAllowed)\b/,
    kind: "replacement_underpriced",
  },
  // The nonce.
  {
    from: "Ganache 7.9 (TransactionPool.prepareTransaction)",
    pattern: /account has nonce of:? (\d+),? tx has nonce of:? (\d+)/i,
    kind: (m) => (Number(m[2]) < Number(m[1]) ? "nonce_too_low" : "nonce_too_high"),
  },
  {
    from: "geth 1.14 ErrNonceTooLow, reth, Erigon, Besu, Hardhat, anvil",
    pattern: /nonce too low/i,
    kind: "nonce_too_low",
  },
  { from: "Nethermind 1.2x OldNonce", pattern: /\bOldNonce\b/, kind: "nonce_too_low" },
  { from: "geth 1.14 ErrNonceTooHigh, Hardhat 2", pattern: /nonce too high/i, kind: "nonce_too_high" },
  {
    from: "Nethermind 1.2x NonceGap, NonceTooFarInFuture",
    pattern: /\b(NonceGap|NonceTooFarInFuture)\b/,
    kind: "nonce_too_high",
  },
  {
    from: "Besu 24.x NONCE_TOO_FAR_IN_FUTURE",
    pattern: /nonce is too distant|too far in (the )?future/i,
    kind: "nonce_too_high",
  },
  // Funds.
  {
    from: "geth 1.14 ErrInsufficientFunds, reth, Erigon, Ganache, anvil",
    pattern: /insufficient funds|insufficient balance/i,
    kind: "insufficient_funds",
  },
  {
    from: "Besu 24.x TRANSACTION_UPFRONT_COST_EXCEEDS_BALANCE",
    pattern: /upfront cost exceeds (account )?balance/i,
    kind: "insufficient_funds",
  },
  { from: "Hardhat 2 / EDR", pattern: /doesn't have enough funds to send tx/i, kind: "insufficient_funds" },
  { from: "Nethermind 1.2x InsufficientFunds", pattern: /\bInsufficientFunds\b/, kind: "insufficient_funds" },
  // Fees.
  { from: "geth 1.14 ErrUnderpriced, Ganache 7.9", pattern: /transaction underpriced/i, kind: "underpriced" },
  {
    from: "geth 1.14 ErrFeeCapTooLow",
    pattern: /max fee per gas less than block base fee/i,
    kind: "underpriced",
  },
  {
    from: "Hardhat 2 / EDR",
    pattern:
      /maxFeePerGas \(\d+\) is too low for the next block|gas price is \d+, which is below the minimum/i,
    kind: "underpriced",
  },
  {
    from: "Besu 24.x GAS_PRICE_TOO_LOW",
    pattern: /gas price below configured minimum/i,
    kind: "underpriced",
  },
  {
    from: "Nethermind 1.2x FeeTooLow, FeeTooLowToCompete; Erigon 3 FeeTooLow",
    pattern: /\bFeeTooLow|fee too low/i,
    kind: "underpriced",
  },
  // A type the chain does not take yet (before it must be read as a method the node lacks).
  {
    from: "geth 1.14 ErrTxTypeNotSupported, reth, Nethermind TxTypeNotSupported; Ganache 7.9 (type 4: invalid RLP)",
    pattern: /(transaction|tx) type (is )?not supported|\bTxTypeNotSupported\b|could not decode transaction/i,
    kind: "other",
  },
];

/**
 * Limits of the request, not of the node: read before the codes, since Besu answers these with
 * -32005, which EIP-1474 also gives to rate limits (a fault). Their wording names the request's size.
 */
export const LIMIT_WORDINGS: readonly Wording[] = [
  {
    from: "Besu 24.x EXCEEDS_BLOCK_GAS_LIMIT (-32005), geth 1.14 ErrGasLimit, Nethermind GasLimitExceeded",
    pattern: /exceeds (the )?block gas limit|gas limit (reached|exceeded)|\bGasLimitExceeded\b/i,
    kind: "limit",
  },
  {
    from: "Besu 24.x EXCEEDS_RPC_MAX_BLOCK_RANGE (-32005), reth 1.x, Erigon 3",
    pattern:
      /range exceeds (the )?maximum|exceeds max(imum)? block range|block range (is )?too (large|wide)|too many blocks/i,
    kind: "limit",
  },
  {
    from: "Besu 24.x EXCEEDS_RPC_MAX_BATCH_SIZE (-32005), geth 1.14 (batch limit), Nethermind",
    pattern: /exceeds max(imum)? batch size|batch (is )?too large|batch (size )?limit exceeded/i,
    kind: "limit",
  },
  {
    from: "geth 1.14 / hosted providers (logs), reth 1.x max logs",
    pattern:
      /query returned more than \d+ results|more than \d+ (logs|results)|response (size )?(limit )?exceed|log response size exceeded/i,
    kind: "limit",
  },
];

/** Methods a node does not serve. */
export const UNSUPPORTED_WORDINGS: readonly Wording[] = [
  { from: "Hardhat 2 / EDR (-32004)", pattern: /Method \S+ is not supported/i, kind: "unsupported" },
  {
    from: "geth 1.14 (-32601), Ganache 7.9",
    pattern: /the method \S+ does not exist\/is not available/i,
    kind: "unsupported",
  },
  {
    from: "Nethermind, Besu, reth (-32601)",
    pattern: /method not found|not (supported|implemented)/i,
    kind: "unsupported",
  },
];

/**
 * The node's own state, not the call: tried last, and only on the node's message (a revert reason
 * or a refusal never gets here).
 */
export const FAULT_WORDINGS: readonly Wording[] = [
  {
    from: "hosted providers (Infura, Alchemy, QuickNode), proxyd, eRPC",
    pattern:
      /rate limit|too many requests|exceeded .*capacity|temporarily unavailable|try again later|request timed? ?out|timeout|service unavailable|overloaded/i,
    kind: "fault",
  },
  { from: "geth 1.14 ErrTxPoolOverflow, reth", pattern: /txpool is full|pool is full/i, kind: "fault" },
  { from: "EIP-1474 -32005 in its own words", pattern: /^limit exceeded$/i, kind: "fault" },
];

/**
 * A fault that says the node refused to work, not that it failed at it: the request was not run
 * (a send was not taken), and the node is asking to be asked less; counted against it on sends too.
 */
export const RATE_LIMIT_PATTERN =
  /rate limit|too many requests|exceeded .*capacity|^limit exceeded$|request rate|compute units|throttl/i;

/**
 * What a read at an old block answers where the node no longer holds that block's state (a pruned
 * node): `missing` says, from the numbers a wording carries, whether it is that or a block the node
 * has not reached yet (anvil words both alike). Tried only after the revert wordings.
 */
export interface StateWording {
  readonly from: string;
  readonly pattern: RegExp;
  readonly missing?: (match: RegExpExecArray) => boolean;
}

export const MISSING_STATE_WORDINGS: readonly StateWording[] = [
  { from: "geth 1.14 hash scheme (trie node gone)", pattern: /missing trie node/i },
  {
    from: "geth 1.14 path scheme, and its tracers",
    pattern: /historical state .*not available|required historical state unavailable/i,
  },
  {
    from: "reth 1.x (`State at block #N is pruned`; code 4444 `pruned history unavailable`), Erigon 3",
    pattern: /\bpruned\b/i,
  },
  { from: "Besu 24.x WORLD_STATE_UNAVAILABLE", pattern: /world state (is )?unavailable/i },
  { from: "Nethermind 1.2x", pattern: /no state available/i },
  {
    from: "anvil 1.7 --prune-history (read here): the same words for a block not mined yet",
    pattern: /BlockOutOfRangeError: block height is (\d+) but requested was (\d+)/,
    missing: (m) => Number(m[2]) < Number(m[1]),
  },
];
