/** The gas limit chaingate signs with: the node's estimate plus the operator's margin, or 21,000 for a plain transfer. */
import type { AccessList, Hex } from "viem";
import { NodeRpcError } from "../errors/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, nodeReadOn } from "../upstream/node-reads.js";
import { checksByQuorum, readByQuorum } from "../upstream/quorum-read.js";
import type { RpcAuthorization } from "./authorizations.js";
import { asFault, estimationFailed, insufficientFunds } from "./tx-errors.js";

/** What a gas estimate depends on. */
export interface GasCall {
  from: Hex;
  /** null deploys `data`. */
  to: Hex | null;
  data: Hex;
  value: bigint;
  accessList?: AccessList | undefined;
  /** EIP-7702 authorizations (signed): the call runs with the delegations they set. */
  authorizationList?: RpcAuthorization[] | undefined;
}

/** Intrinsic gas of a transaction with no data to an account with no code. */
const PLAIN_TRANSFER_GAS = 21_000n;
/** Addresses up to here are (or may become) precompiles, which run code for a plain transfer. */
const PRECOMPILES = 0xffffn;

const hex = (n: bigint): Hex => `0x${n.toString(16)}`;

/** Gas limit = estimate x (100 + margin) / 100; a revert is ESTIMATION_FAILED, a fault NODE_UNAVAILABLE. */
export async function estimateGas(chain: Chain, call: GasCall, marginPercent: number): Promise<bigint> {
  const plain = await plainTransferGas(chain, call);
  if (plain !== undefined) return plain;
  const asked = {
    from: call.from,
    ...(call.to === null ? {} : { to: call.to }),
    data: call.data,
    value: hex(call.value),
    ...(call.authorizationList === undefined ? {} : { authorizationList: call.authorizationList }),
  };
  try {
    const estimate = checksByQuorum(chain)
      ? await readByQuorum(chain, {
          what: "the gas estimate",
          ask: async (label, block) =>
            BigInt(await nodeReadOn(chain, label, "eth_estimateGas", [asked, block ?? "pending"])),
          same: estimatesAgree,
          pick: (estimates) => [...estimates].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))[0]!,
          show: (gas) => `${gas} gas`,
        })
      : BigInt(await nodeRead(chain, "eth_estimateGas", [asked, "pending"]));
    return (estimate * BigInt(100 + marginPercent)) / 100n;
  } catch (error) {
    if (error instanceof NodeRpcError) throw estimationFailed(error);
    throw asFault(error, "estimating gas");
  }
}

/**
 * Implementations search for the lowest gas that succeeds with different tolerances (geth stops
 * within 1.5%), so two honest estimates of one call may differ a little: within 10% of the first
 * they agree, and the largest is used.
 */
const ESTIMATE_TOLERANCE_PERCENT = 10n;
function estimatesAgree(a: bigint, b: bigint): boolean {
  const [low, high] = a < b ? [a, b] : [b, a];
  return high * 100n <= low * (100n + ESTIMATE_TOLERANCE_PERCENT);
}

/**
 * A value transfer with no data to an address with no code costs exactly 21,000 gas: two state
 * reads (code and balance at `latest`) answer what eth_estimateGas would. An estimate runs the
 * call on the pending block, whose cost on some nodes (anvil) grows with the pool and history;
 * the reads stay constant (#17: the bench's later rounds no longer slow down). Precompile
 * addresses (which run code) and delegated EOAs (EIP-7702 code) are estimated as before, and so
 * is anything with an access list. At `latest` a balance can be stale by the pending block: a
 * send it let through that the pool then refuses takes the refusal path (nonce given back or
 * filled), as any node refusal does.
 */
async function plainTransferGas(chain: Chain, call: GasCall): Promise<bigint | undefined> {
  if (
    call.to === null ||
    call.data !== "0x" ||
    call.accessList !== undefined ||
    call.authorizationList !== undefined ||
    BigInt(call.to) <= PRECOMPILES
  )
    return undefined;
  let code: Hex;
  let balance: Hex;
  try {
    [code, balance] = await Promise.all([
      // Whether 21,000 is the whole cost rests on it: agreed by a quorum where there is one.
      readAtHead(chain, "eth_getCode", call.to, undefined, true),
      // A kept balance answers only when it covers the value: a refusal is always read fresh (the
      // account may have been funded since, in the same block on a development chain).
      readAtHead(chain, "eth_getBalance", call.from, (kept) => BigInt(kept) >= call.value),
    ]);
  } catch (error) {
    throw asFault(error, "reading the recipient's code");
  }
  if (code !== "0x") return undefined;
  // What eth_estimateGas refuses without fees: a value above the balance.
  if (BigInt(balance) < call.value) throw insufficientFunds(BigInt(balance), call.value);
  return PLAIN_TRANSFER_GAS;
}

/** Reads of the head block kept, per chain by method and address (bounded: cleared when full). */
const atHeadOf = new WeakMap<Chain, Map<string, { head: number; at: number; value: Hex }>>();
const AT_HEAD_MAX = 10_000;

/**
 * `method` (code or balance) of `address` at `latest`, read once per head block: a burst from one
 * address to one recipient paid two node reads per send for the same answer. The head is the
 * highest the chain's tracker knows; an answer is kept no longer than one head poll interval, so a
 * head the tracker has not seen yet cannot keep it for long. What a read at `latest` answers for
 * that block, so nothing changes for the caller.
 */
async function readAtHead(
  chain: Chain,
  method: "eth_getCode" | "eth_getBalance",
  address: Hex,
  usable: (kept: Hex) => boolean = () => true,
  byQuorum = false,
): Promise<Hex> {
  const head = chain.head?.highest;
  // Kept per chain object, not per chain id: two runtimes of one process may front different nodes.
  let atHead = atHeadOf.get(chain);
  if (atHead === undefined) {
    atHead = new Map();
    atHeadOf.set(chain, atHead);
  }
  const key = `${method}:${address.toLowerCase()}`;
  const now = Date.now();
  const known = atHead.get(key);
  if (
    head !== undefined &&
    known?.head === head &&
    now - known.at <= chain.head!.intervalMs &&
    usable(known.value)
  )
    return known.value;
  const value: Hex =
    byQuorum && checksByQuorum(chain)
      ? await readByQuorum(chain, {
          what: `${method} of ${address}`,
          ask: (label, block) => nodeReadOn(chain, label, method, [address, block ?? "latest"]),
          same: (a, b) => a.toLowerCase() === b.toLowerCase(),
          show: (code) => (code === "0x" ? "no code" : `${(code.length - 2) / 2} bytes of code`),
        })
      : await nodeRead(chain, method, [address, "latest"], { batch: true });
  if (head !== undefined) {
    if (atHead.size >= AT_HEAD_MAX) atHead.clear();
    atHead.set(key, { head, at: now, value });
  }
  return value;
}
