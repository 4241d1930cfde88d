/** A read a signature depends on, asked of every usable upstream at once and used only when a quorum of them agrees (decision 149). */
import { ChaingateError } from "../errors/chaingate-error.js";
import { classifyNodeError, revertDataOf } from "../errors/node-errors.js";
import { NodeRpcError, upstreamsDisagree, upstreamUnavailable } from "../errors/rpc-errors.js";
import type { Chain } from "./chain-registry.js";
import { nodeReadOn } from "./node-reads.js";

/** What one upstream said: a value, its own refusal (a revert, bad params), or nothing (a fault, a timeout). */
export type Vote<T> =
  | { label: string; kind: "answer"; value: T }
  | { label: string; kind: "refused"; error: ChaingateError }
  | { label: string; kind: "silent"; why: string };

/** How many agreeing upstreams make a quorum when `asked` members may be asked and `configured` exist. */
export function requiredVotes(quorum: number | undefined, asked: number, configured: number): number {
  return quorum ?? Math.max(Math.min(2, configured), asked);
}

export interface QuorumRead<T> {
  /** What is read, for the refusal ("the gas estimate"). */
  what: string;
  /**
   * The read on one upstream. `block` is undefined the first time (the caller's own block tag);
   * after a disagreement every upstream is asked again at one block number they all have, so two
   * honest nodes a block apart are not taken for a lie.
   */
  ask: (label: string, block: string | undefined) => Promise<T>;
  /** Whether two answers say the same thing. */
  same: (a: T, b: T) => boolean;
  /** Whether two refusals say the same thing (default: sameRefusal). */
  sameRefusal?: (a: ChaingateError, b: ChaingateError) => boolean;
  /** An answer in a few words, for the refusal. */
  show: (value: T) => string;
  /** The one answer used of those that agree (default: the first). */
  pick?: (values: T[]) => T;
}

export type Tally<T> =
  | { kind: "agreed"; vote: Extract<Vote<T>, { kind: "answer" | "refused" }>; values: T[]; by: string[] }
  | { kind: "disagree"; votes: Vote<T>[] }
  | { kind: "short"; votes: Vote<T>[] };

/**
 * With `required` N, N upstreams must say the same and none may say otherwise; a silent one counts
 * against the quorum, never for it. A refusal is a vote like an answer: two nodes that both say a
 * call reverts agree.
 */
export function tallyVotes<T>(
  votes: readonly Vote<T>[],
  required: number,
  read: Pick<QuorumRead<T>, "same" | "sameRefusal">,
): Tally<T> {
  const sameRefusal = read.sameRefusal ?? sameRefusalOf;
  const spoken = votes.filter(
    (v): v is Extract<Vote<T>, { kind: "answer" | "refused" }> => v.kind !== "silent",
  );
  const first = spoken[0];
  if (first === undefined) return { kind: "short", votes: [...votes] };
  const agrees = (v: (typeof spoken)[number]) =>
    v.kind === "answer" && first.kind === "answer"
      ? read.same(first.value, v.value)
      : v.kind === "refused" && first.kind === "refused"
        ? sameRefusal(first.error, v.error)
        : false;
  if (!spoken.every(agrees)) return { kind: "disagree", votes: [...votes] };
  if (spoken.length < required) return { kind: "short", votes: [...votes] };
  const values = spoken.flatMap((v) => (v.kind === "answer" ? [v.value] : []));
  return { kind: "agreed", vote: first, values, by: spoken.map((v) => v.label) };
}

/**
 * Two refusals agree when they mean the same (a node's wording differs by implementation): the
 * same kind of node error, and for a revert the same revert data; else the same code.
 */
export function sameRefusalOf(a: ChaingateError, b: ChaingateError): boolean {
  if (a instanceof NodeRpcError && b instanceof NodeRpcError) {
    const kind = classifyNodeError(a.message, a.rpcCode, a.data);
    if (kind !== classifyNodeError(b.message, b.rpcCode, b.data)) return false;
    return (
      kind !== "reverted" ||
      (revertDataOf(a.data) ?? "0x").toLowerCase() === (revertDataOf(b.data) ?? "0x").toLowerCase()
    );
  }
  return a.code === b.code;
}

/** Each vote in a few words: "a.example: 0x5208; b.example: reverted (...)". */
export function describeVotes<T>(votes: readonly Vote<T>[], show: (value: T) => string): string {
  return votes
    .map(
      (v) =>
        `${v.label}: ${v.kind === "answer" ? show(v.value) : v.kind === "refused" ? `refused (${v.error.message.slice(0, 120)})` : `no answer (${v.why.slice(0, 120)})`}`,
    )
    .join("; ");
}

/** Whether a signature on this chain waits for a quorum of upstreams (two or more are configured). */
export function checksByQuorum(chain: Chain): boolean {
  return chain.pool.upstreams.length >= 2;
}

/** One upstream's vote: its answer, its own refusal, or silence when it could not answer. */
export async function voteOf<T>(label: string, ask: () => Promise<T>): Promise<Vote<T>> {
  try {
    return { label, kind: "answer", value: await ask() };
  } catch (error) {
    if (error instanceof ChaingateError && !error.failover) return { label, kind: "refused", error };
    return { label, kind: "silent", why: (error as Error).message };
  }
}

/**
 * The value a quorum of the chain's usable upstreams agrees on; throws the refusal they agree on
 * (as one node's would be thrown), UPSTREAMS_DISAGREE naming what each said when any two differ
 * (also at one block they all hold), or UPSTREAM_UNAVAILABLE when too few answer.
 */
export async function readByQuorum<T>(chain: Chain, read: QuorumRead<T>): Promise<T> {
  const { asked, configured } = chain.pool.quorumView();
  const required = requiredVotes(chain.pool.quorum, asked.length, configured);
  if (asked.length < required)
    throw upstreamUnavailable(
      `${read.what}: ${asked.length} of ${configured} upstream(s) can be asked now and ${required} must agree before custody signs`,
    );
  let tally = tallyVotes(
    await Promise.all(asked.map((label) => voteOf(label, () => read.ask(label, undefined)))),
    required,
    read,
  );
  if (tally.kind === "disagree") {
    const pinned = await commonBlock(chain, asked);
    if (pinned !== undefined)
      tally = tallyVotes(
        await Promise.all(asked.map((label) => voteOf(label, () => read.ask(label, pinned)))),
        required,
        read,
      );
  }
  if (tally.kind === "agreed") {
    if (tally.vote.kind === "refused") throw tally.vote.error;
    return read.pick ? read.pick(tally.values) : tally.vote.value;
  }
  const said = describeVotes(tally.votes, read.show);
  if (tally.kind === "disagree")
    throw upstreamsDisagree(
      `${read.what}: the upstreams disagree, so nothing is signed (${said})`,
      tally.votes.map((v) => ({
        upstream: v.label,
        said: describeVotes([v], read.show).slice(v.label.length + 2),
      })),
    );
  throw upstreamUnavailable(`${read.what}: fewer than ${required} upstreams answered alike (${said})`);
}

/** The highest block every asked upstream holds now (the lowest of their heads), as a hex number. */
async function commonBlock(chain: Chain, labels: readonly string[]): Promise<string | undefined> {
  try {
    const heads = await Promise.all(labels.map((l) => nodeReadOn(chain, l, "eth_blockNumber", [])));
    return `0x${Math.min(...heads.map((h) => Number(BigInt(h)))).toString(16)}`;
  } catch {
    return undefined;
  }
}
