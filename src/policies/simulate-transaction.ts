/** A transaction run before it is signed: eth_simulateV1 where the node has it (logs included), else eth_call (the revert only). */
import { type Hex, hexToBigInt } from "viem";
import { classifyNodeError, revertDataOf } from "../errors/node-errors.js";
import { MethodNotServedError, NodeRpcError } from "../errors/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead } from "../upstream/node-reads.js";
import type { TokenMovement } from "./decode-call.js";

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

/** ERC20's Transfer(address indexed from, address indexed to, uint256 value). */
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

const hex = (n: bigint): Hex => `0x${n.toString(16)}`;

export async function simulateTransaction(chain: Chain, call: SimulatedCall): Promise<Simulation> {
  const tx = {
    from: call.from,
    ...(call.to === null ? {} : { to: call.to }),
    input: call.data,
    value: hex(call.value),
    gas: hex(call.gas),
  };
  try {
    const blocks = await nodeRead(chain, "eth_simulateV1", [
      { blockStateCalls: [{ calls: [tx] }], validation: false },
      "latest",
    ]);
    return fromSimulateV1(blocks);
  } catch (error) {
    if (!(error instanceof MethodNotServedError)) throw error;
  }
  // The node has no eth_simulateV1: eth_call says whether it reverts, nothing of its logs.
  try {
    // `data`, not `input`: a node that takes only one of them (Hardhat refuses both at once).
    const { input: _input, ...asCall } = tx;
    await nodeRead(chain, "eth_call", [{ ...asCall, data: call.data }, "latest"]);
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
 * ERC20 amounts leaving `address`, per token (lower case): from the simulated Transfer logs, or,
 * without logs, from the call's own decoded transfer (what eth_call alone lets us see).
 */
export function erc20Outflows(
  simulation: Simulation,
  address: string,
  decoded: TokenMovement | null,
): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const add = (token: string, amount: bigint) => out.set(token, (out.get(token) ?? 0n) + amount);
  const from = address.toLowerCase();
  if (simulation.logs === null) {
    if (decoded && decoded.how !== "approve") add(decoded.token, decoded.amount);
    return out;
  }
  for (const log of simulation.logs) {
    // Three topics: ERC20 (ERC721's Transfer indexes the token id as a fourth).
    if (log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) continue;
    if (`0x${log.topics[1]!.slice(26)}`.toLowerCase() !== from) continue;
    if (log.data.length < 66) continue;
    add(log.address.toLowerCase(), hexToBigInt(log.data.slice(0, 66) as Hex));
  }
  return out;
}
