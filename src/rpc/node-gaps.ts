/** What chaingate answers where a node lacks a standard method or leaves a standard field empty, derived from calls it does serve. */
import type { Chain } from "../upstream/chain-registry.js";
import { type BlockId, fieldOf, type NodeBlock, nodeRead, receiptOf } from "../upstream/node-reads.js";

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * The eth wire protocol version every current execution client speaks (eth/68). Asked of a node
 * that no longer serves it (geth since 1.14, Hardhat), chaingate answers this rather than an error.
 */
export const ETH_PROTOCOL_VERSION = hex(68);

/** `id` is a client's parameter, already validated by the method's schema. */
function blockBy(chain: Chain, by: "hash" | "number", id: unknown): Promise<NodeBlock | null> {
  return by === "hash"
    ? nodeRead(chain, "eth_getBlockByHash", [String(id), false])
    : nodeRead(chain, "eth_getBlockByNumber", [id as BlockId, false]);
}

/** A block's uncle count from the block itself; null for a block that does not exist. */
export async function uncleCount(chain: Chain, by: "hash" | "number", id: unknown): Promise<string | null> {
  const block = await blockBy(chain, by, id);
  return block === null ? null : hex(Array.isArray(block.uncles) ? block.uncles.length : 0);
}

/**
 * An uncle by index: null where the block has none at that index (every block since the merge), and
 * otherwise nothing chaingate can answer correctly: undefined hands the node's own refusal back.
 */
export async function uncleAt(
  chain: Chain,
  by: "hash" | "number",
  id: unknown,
  index: unknown,
): Promise<null | undefined> {
  const block = await blockBy(chain, by, id);
  if (block === null) return null;
  const at = Number(BigInt(String(index)));
  return at >= (Array.isArray(block.uncles) ? block.uncles.length : 0) ? null : undefined;
}

/** A block's receipts, one eth_getTransactionReceipt each (nodes without eth_getBlockReceipts: Hardhat, Ganache). */
export async function blockReceipts(chain: Chain, block: unknown): Promise<unknown[] | null> {
  // A block specifier: a tag or number, a hash, or an EIP-1898 object naming either.
  const named =
    typeof block === "object" && block !== null
      ? (block as { blockHash?: unknown; blockNumber?: unknown })
      : {};
  const hash = named.blockHash ?? (typeof block === "string" && block.length === 66 ? block : undefined);
  const found =
    hash === undefined
      ? await blockBy(chain, "number", named.blockNumber ?? block)
      : await blockBy(chain, "hash", hash);
  if (found === null) return null;
  return Promise.all((found.transactions ?? []).map((tx) => receiptOf(chain, String(tx), { batch: true })));
}

/**
 * eth_getStorageValues from one eth_getStorageAt per slot (batched), for nodes that lack it. Each
 * value is a 32-byte word, as geth answers them: Ganache answers an empty slot "0x".
 */
export async function storageValues(chain: Chain, requests: unknown, block: unknown): Promise<unknown> {
  const entries = Object.entries(requests as Record<string, string[]>);
  if (entries.reduce((n, [, slots]) => n + slots.length, 0) > 1024) return undefined;
  const answer: Record<string, unknown[]> = {};
  await Promise.all(
    entries.map(async ([address, slots]) => {
      answer[address] = await Promise.all(
        slots.map(async (slot) => {
          const value = await nodeRead(chain, "eth_getStorageAt", [address, slot, block as BlockId], {
            batch: true,
          });
          return `0x${value.slice(2).padStart(64, "0")}`;
        }),
      );
    }),
  );
  return answer;
}

/** The next block's base fee, as eth_feeHistory reports it (its last entry), for nodes without eth_baseFee. */
export async function nextBaseFee(chain: Chain): Promise<unknown> {
  const history = await nodeRead(chain, "eth_feeHistory", ["0x1", "latest", []]);
  const fees = history?.baseFeePerGas;
  return Array.isArray(fees) && fees.length > 0 ? fees[fees.length - 1] : undefined;
}

/**
 * The pending block with its number: Hardhat answers `number: null` (the execution-apis schema and
 * every client library require one), which is its parent's number plus one.
 */
export async function completePendingBlock(chain: Chain, block: unknown): Promise<unknown> {
  const parentHash = fieldOf(block, "parentHash");
  if (fieldOf(block, "number") != null || typeof parentHash !== "string" || parentHash === "") return block;
  const parent = await blockBy(chain, "hash", parentHash);
  if (parent?.number == null) return block;
  return Object.assign({}, block, { number: hex(Number(BigInt(parent.number)) + 1) });
}
