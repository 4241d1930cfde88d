/** Asks each usable upstream of a source chain for a transport's MessageSent log, and says whether a quorum confirms it as final. */
import { type Hex, numberToHex } from "viem";
import type { Finality } from "../config/config.js";
import type { Chain } from "../upstream/chain-registry.js";
import { describeFinality } from "../upstream/chain-trust.js";
import { type Ask, finalBlockBy } from "../upstream/final-block.js";
import { nodeReadOn } from "../upstream/node-reads.js";
import { requiredVotes } from "../upstream/quorum-read.js";
import { isSentLog, type Log, transportOfSent } from "./endpoint-events.js";

/** What one upstream says of the transport's source event. */
export type SourceVote =
  | { label: string; kind: "final"; key: string; log: Log; blockHash: Hex }
  | { label: string; kind: "not_final"; key: string; block: number }
  /**
   * The upstream answered, and its canonical chain has no such event (or its transaction failed);
   * `head` is its block number where it had no receipt at all, so a node that is merely behind is told apart.
   */
  | { label: string; kind: "absent"; why: string; head?: number }
  /** The upstream did not answer (a fault, a timeout). */
  | { label: string; kind: "silent"; why: string };

export type SourceVerdict =
  /** Final on a quorum of upstreams that all show the same log: the only verdict that moves value. */
  | { kind: "confirmed"; log: Log; blockHash: Hex; block: number; confirmedBy: string[] }
  /** Every upstream that has it agrees, but it is not final yet: an ordinary wait. */
  | { kind: "not_final"; reason: string }
  /** A quorum of upstreams answers that the event is not on their canonical chain. */
  | { kind: "gone"; reason: string }
  /** Upstreams disagree, or too few answer: nothing moves until they agree. */
  | { kind: "disputed"; reason: string };

/** One upstream's reading: the receipt, the log in it, whether its block is canonical and final there. */
async function voteOf(
  chain: Chain,
  label: string,
  endpoint: Hex,
  transport: { id: string; source_tx_hash: string },
  finality: Finality,
): Promise<SourceVote> {
  const ask: Ask = (method, params) => nodeReadOn(chain, label, method, params);
  try {
    const receipt = await ask("eth_getTransactionReceipt", [transport.source_tx_hash]);
    if (receipt === null) {
      const head = Number(BigInt(await ask("eth_blockNumber", [])));
      return {
        label,
        kind: "absent",
        why: `no receipt for ${transport.source_tx_hash} (head ${head})`,
        head,
      };
    }
    if (receipt.status !== "0x1")
      return { label, kind: "absent", why: `source transaction failed (status ${receipt.status})` };
    const log = receipt.logs?.find(
      (l) =>
        l.removed !== true &&
        typeof l.address === "string" &&
        l.address.toLowerCase() === endpoint.toLowerCase() &&
        isSentLog(l) &&
        transportOfSent(chain, l)?.id.toLowerCase() === transport.id.toLowerCase(),
    );
    if (log === undefined || typeof receipt.blockHash !== "string" || typeof receipt.blockNumber !== "string")
      return { label, kind: "absent", why: `no MessageSent with this id in ${transport.source_tx_hash}` };
    const block = Number(BigInt(receipt.blockNumber));
    // Everything that decides what is minted, and where it sits in the chain, must be the same on every upstream.
    const key = [receipt.blockHash, block, log.logIndex, log.topics.join(","), log.data]
      .join("|")
      .toLowerCase();
    const [canonical, final] = await Promise.all([
      ask("eth_getBlockByNumber", [numberToHex(block), false]),
      finalBlockBy(ask, finality),
    ]);
    if (canonical?.hash?.toLowerCase() !== receipt.blockHash.toLowerCase())
      return { label, kind: "absent", why: `block ${block} ${receipt.blockHash} is no longer canonical` };
    if (block > final) return { label, kind: "not_final", key, block };
    return {
      label,
      kind: "final",
      key,
      log: { ...log, blockNumber: receipt.blockNumber, transactionHash: transport.source_tx_hash as Hex },
      blockHash: receipt.blockHash,
    };
  } catch (error) {
    return { label, kind: "silent", why: (error as Error).message.slice(0, 200) };
  }
}

/**
 * The verdict from every vote. With the default quorum every usable upstream must show the same final
 * log; with an explicit N, N must, and none may show a different one. Missing or failed answers count
 * against the quorum, never for it, so a forged log on one upstream, or the honest ones taken down,
 * leaves the transport where it is.
 */
export function tally(given: readonly SourceVote[], required: number): SourceVerdict {
  // An upstream with no receipt whose head is below the event's block has not seen that block yet.
  const eventBlock = given.reduce<number | undefined>(
    (found, v) =>
      found ??
      (v.kind === "final" ? Number(BigInt(v.log.blockNumber)) : v.kind === "not_final" ? v.block : undefined),
    undefined,
  );
  const votes = given.map(
    (v): SourceVote =>
      v.kind === "absent" && v.head !== undefined && eventBlock !== undefined && v.head < eventBlock
        ? { label: v.label, kind: "silent", why: `behind (head ${v.head}, event in block ${eventBlock})` }
        : v,
  );
  const behind = votes.filter((v) => v.kind === "silent" && v.why.startsWith("behind")).length;
  const keys = new Set(votes.flatMap((v) => (v.kind === "final" || v.kind === "not_final" ? [v.key] : [])));
  const final = votes.filter((v): v is Extract<SourceVote, { kind: "final" }> => v.kind === "final");
  const summary = () =>
    votes
      .map((v) =>
        v.kind === "final"
          ? `${v.label}: confirms`
          : v.kind === "not_final"
            ? `${v.label}: not final yet`
            : `${v.label}: ${v.why}`,
      )
      .join("; ");
  if (keys.size > 1)
    return { kind: "disputed", reason: `upstreams show different source events (${summary()})` };
  if (final.length >= required) {
    const first = final[0]!;
    return {
      kind: "confirmed",
      log: first.log,
      blockHash: first.blockHash,
      block: Number(BigInt(first.log.blockNumber)),
      confirmedBy: final.map((v) => v.label),
    };
  }
  const present = votes.filter((v) => v.kind === "final" || v.kind === "not_final").length;
  const absent = votes.filter((v) => v.kind === "absent").length;
  if (present === 0 && absent >= required)
    return { kind: "gone", reason: `the source event is not on the canonical chain (${summary()})` };
  // Everyone who has the event agrees and nobody denies it: it only needs blocks (or lagging nodes) to catch up.
  if (present + behind >= required && votes.every((v) => v.kind !== "absent") && present > 0)
    return { kind: "not_final", reason: `waiting for finality (${summary()})` };
  return {
    kind: "disputed",
    reason: `${final.length} of the ${required} upstream confirmations needed (${summary()})`,
  };
}

/** Reads the source event on every usable upstream of `chain` and tallies the votes. */
export async function verifySource(
  chain: Chain,
  endpoint: Hex,
  transport: { id: string; source_tx_hash: string },
  trust: { finality: Finality; quorum: number | undefined },
): Promise<SourceVerdict> {
  const { asked, configured } = chain.pool.quorumView();
  const required = requiredVotes(trust.quorum, asked.length, configured);
  if (asked.length < required)
    return {
      kind: "disputed",
      reason: `${asked.length} of ${configured} upstream(s) can be asked now; ${required} must confirm (final at ${describeFinality(trust.finality)})`,
    };
  const votes = await Promise.all(
    asked.map((label) => voteOf(chain, label, endpoint, transport, trust.finality)),
  );
  return tally(votes, required);
}
