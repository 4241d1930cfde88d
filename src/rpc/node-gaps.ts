/** What chaingate answers where a node lacks a standard method or leaves a standard field empty, derived from calls it does serve. */
import type { Chain } from "../upstream/chain-registry.js";

type Block = {
  number?: string | null;
  parentHash?: string;
  uncles?: unknown[];
  transactions?: unknown[];
} | null;

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * The eth wire protocol version every current execution client speaks (eth/68). Asked of a node
 * that no longer serves it (geth since 1.14, Hardhat), chaingate answers this rather than an error.
 */
export const ETH_PROTOCOL_VERSION = hex(68);

async function blockBy(chain: Chain, by: "hash" | "number", id: unknown): Promise<Block> {
  const method = by === "hash" ? "eth_getBlockByHash" : "eth_getBlockByNumber";
  return (await chain.pool.call({ method, params: [id, false] })) as Block;
}

/** A block's uncle count from the block itself; null for a block that does not exist. */
async function uncleCount(chain: Chain, by: "hash" | "number", id: unknown): Promise<string | null> {
  const block = await blockBy(chain, by, id);
  return block === null ? null : hex(Array.isArray(block.uncles) ? block.uncles.length : 0);
}

/**
 * An uncle by index: null where the block has none at that index (every block since the merge), and
 * otherwise nothing chaingate can answer correctly: undefined hands the node's own refusal back.
 */
async function uncleAt(
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
async function blockReceipts(chain: Chain, block: unknown): Promise<unknown[] | null> {
  // A block specifier: a tag or number, a hash, or an EIP-1898 object naming either.
  const named =
    typeof block === "object" && block !== null
      ? (block as { blockHash?: unknown; blockNumber?: unknown })
      : {};
  const hash = named.blockHash ?? (typeof block === "string" && block.length === 66 ? block : undefined);
  const found = (
    hash === undefined
      ? await blockBy(chain, "number", named.blockNumber ?? block)
      : await blockBy(chain, "hash", hash)
  ) as { transactions?: string[] } | null;
  if (found === null) return null;
  return Promise.all(
    (found.transactions ?? []).map((tx) =>
      chain.pool.call({ method: "eth_getTransactionReceipt", params: [tx], batch: true }),
    ),
  );
}

/**
 * Answers for spec methods a node does not serve (Hardhat has none of these; geth dropped
 * eth_protocolVersion), each from other calls; undefined where no correct answer can be made.
 */
export const WHEN_UNSUPPORTED: Readonly<
  Record<string, (chain: Chain, params: readonly unknown[]) => Promise<unknown | undefined>>
> = {
  eth_protocolVersion: async () => ETH_PROTOCOL_VERSION,
  eth_getUncleCountByBlockHash: (chain, [hash]) => uncleCount(chain, "hash", hash),
  eth_getUncleCountByBlockNumber: (chain, [tag]) => uncleCount(chain, "number", tag),
  eth_getUncleByBlockHashAndIndex: (chain, [hash, index]) => uncleAt(chain, "hash", hash, index),
  eth_getUncleByBlockNumberAndIndex: (chain, [tag, index]) => uncleAt(chain, "number", tag, index),
  eth_getBlockReceipts: (chain, [block]) => blockReceipts(chain, block),
};

/**
 * The pending block with its number: Hardhat answers `number: null` (the execution-apis schema and
 * every client library require one), which is its parent's number plus one.
 */
export async function completePendingBlock(chain: Chain, block: unknown): Promise<unknown> {
  const pending = block as Block;
  if (pending === null || typeof pending !== "object" || pending.number != null || !pending.parentHash)
    return block;
  const parent = await blockBy(chain, "hash", pending.parentHash);
  if (parent?.number == null) return block;
  return { ...pending, number: hex(Number(BigInt(parent.number)) + 1) };
}
