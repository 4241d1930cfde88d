/** A transaction run before it is signed: eth_simulateV1 where the node has it (logs included), else eth_call (the revert only). */
import { type Hex, hexToBigInt } from "viem";
import { classifyNodeError, revertDataOf } from "../errors/node-errors.js";
import { MethodNotServedError, NodeRpcError } from "../errors/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";
import type { Ask } from "../upstream/final-block.js";
import { nodeRead, nodeReadOn } from "../upstream/node-reads.js";
import { checksByQuorum, readByQuorum } from "../upstream/quorum-read.js";
import { type TokenMovement, UNLIMITED } from "./decode-call.js";

export interface SimulatedLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
}

export interface Simulation {
  via: "eth_simulateV1" | "eth_call";
  reverted: boolean;
  /** The revert's data (hex), when it reverted. */
  revertData?: Hex;
  /** The logs it would emit; null where the node could only run eth_call. */
  logs: SimulatedLog[] | null;
}

export interface SimulatedCall {
  from: string;
  to: string | null;
  data: Hex;
  value: bigint;
  gas: bigint;
}

/** Transfer(from, to, value) of ERC20 (3 topics) and ERC721 (the token id as a 4th). */
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/** Approval(owner, spender, value) of ERC20 (3 topics) and ERC721 (the token id as a 4th). */
const APPROVAL_TOPIC = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925";
/** ApprovalForAll(owner, operator, approved) of ERC721 and ERC1155. */
const APPROVAL_FOR_ALL_TOPIC = "0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31";
const ZERO_WORD = `0x${"0".repeat(64)}`;

const hex = (n: bigint): Hex => `0x${n.toString(16)}`;

/**
 * Where the chain has two or more upstreams, each runs the simulation and a quorum must agree
 * (decision 149): one poisoned node cannot make a draining call look harmless.
 */
export function simulateTransaction(chain: Chain, call: SimulatedCall): Promise<Simulation> {
  if (!checksByQuorum(chain))
    return simulateWith((method, params) => nodeRead(chain, method, params), call, "latest");
  return readByQuorum(chain, {
    what: "the simulation",
    ask: (label, block) =>
      simulateWith((method, params) => nodeReadOn(chain, label, method, params), call, block ?? "latest"),
    same: sameSimulation,
    show: describeSimulation,
  });
}

/** Two runs agree when both revert alike, or both succeed with the same logs where both could see logs. */
export function sameSimulation(a: Simulation, b: Simulation): boolean {
  if (a.reverted !== b.reverted) return false;
  if ((a.revertData ?? "0x").toLowerCase() !== (b.revertData ?? "0x").toLowerCase()) return false;
  if (a.logs === null || b.logs === null) return true;
  return (
    a.logs.length === b.logs.length &&
    a.logs.every((log, i) => {
      const other = b.logs![i]!;
      return (
        log.address.toLowerCase() === other.address.toLowerCase() &&
        log.data.toLowerCase() === other.data.toLowerCase() &&
        log.topics.join().toLowerCase() === other.topics.join().toLowerCase()
      );
    })
  );
}

function describeSimulation(s: Simulation): string {
  if (s.reverted) return `reverts${s.revertData === undefined ? "" : ` (${s.revertData.slice(0, 74)})`}`;
  return s.logs === null ? "succeeds (eth_call)" : `succeeds with ${s.logs.length} log(s)`;
}

async function simulateWith(read: Ask, call: SimulatedCall, block: string): Promise<Simulation> {
  const tx = {
    from: call.from,
    ...(call.to === null ? {} : { to: call.to }),
    input: call.data,
    value: hex(call.value),
    gas: hex(call.gas),
  };
  try {
    const blocks = await read("eth_simulateV1", [
      { blockStateCalls: [{ calls: [tx] }], validation: false },
      block,
    ]);
    return fromSimulateV1(blocks);
  } catch (error) {
    if (!(error instanceof MethodNotServedError)) throw error;
  }
  // The node has no eth_simulateV1: eth_call says whether it reverts, nothing of its logs.
  try {
    // `data`, not `input`: a node that takes only one of them (Hardhat refuses both at once).
    const { input: _input, ...asCall } = tx;
    await read("eth_call", [{ ...asCall, data: call.data }, block]);
    return { via: "eth_call", reverted: false, logs: null };
  } catch (error) {
    if (
      !(error instanceof NodeRpcError) ||
      classifyNodeError(error.message, error.rpcCode, error.data) !== "reverted"
    )
      throw error;
    const data = revertDataOf(error.data);
    return {
      via: "eth_call",
      reverted: true,
      logs: null,
      ...(data === undefined ? {} : { revertData: data }),
    };
  }
}

function fromSimulateV1(blocks: unknown): Simulation {
  const result = Array.isArray(blocks)
    ? ((blocks[0] as { calls?: unknown[] } | undefined)?.calls?.[0] as
        | { status?: string; logs?: SimulatedLog[]; returnData?: Hex; error?: { data?: Hex } }
        | undefined)
    : undefined;
  if (!result || typeof result.status !== "string")
    throw new NodeRpcError(-32603, "eth_simulateV1 answered without a call result", undefined);
  const reverted = result.status !== "0x1";
  const revertData = result.error?.data ?? (reverted ? result.returnData : undefined);
  const logs = (result.logs ?? []).map((l) => ({ address: l.address, topics: l.topics, data: l.data }));
  return { via: "eth_simulateV1", reverted, logs, ...(revertData === undefined ? {} : { revertData }) };
}

/**
 * Token units leaving `address`, or put where another address may take them, per token (lower
 * case). From the simulated logs: ERC20 transfers out and allowances granted (their amount), ERC721
 * transfers out and approvals (one unit each), operator grants (everything: UNLIMITED). Without
 * logs, from the call's own decoded transfer or grant (what eth_call alone lets us see).
 */
export function erc20Outflows(
  simulation: Simulation,
  address: string,
  decoded: TokenMovement | null,
): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const add = (token: string, amount: bigint) => {
    const sum = (out.get(token) ?? 0n) + amount;
    out.set(token, sum > UNLIMITED ? UNLIMITED : sum);
  };
  const from = address.toLowerCase();
  if (simulation.logs === null) {
    if (decoded) add(decoded.token, decoded.amount);
    return out;
  }
  for (const log of simulation.logs) {
    const topic = log.topics[0]?.toLowerCase();
    if (log.topics.length < 3 || `0x${log.topics[1]!.slice(26)}`.toLowerCase() !== from) continue;
    const token = log.address.toLowerCase();
    const word = log.data.length >= 66 ? hexToBigInt(log.data.slice(0, 66) as Hex) : undefined;
    if (topic === TRANSFER_TOPIC || topic === APPROVAL_TOPIC) {
      // ERC721 (a 4th topic): one token moved, or one token's approval (to nobody: revoked).
      if (log.topics.length === 4) {
        if (topic === TRANSFER_TOPIC || log.topics[2]!.toLowerCase() !== ZERO_WORD) add(token, 1n);
      } else if (word !== undefined) add(token, word);
    } else if (topic === APPROVAL_FOR_ALL_TOPIC && word !== undefined && word !== 0n) {
      add(token, UNLIMITED);
    }
  }
  return out;
}
