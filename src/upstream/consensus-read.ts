/** A client's read that N upstreams must answer alike (`consensus=N`, `Chaingate-Consensus: N`), with the chain's policy for a disagreement (decision 150). */
import { upstreamsDisagree, upstreamUnavailable } from "../errors/rpc-errors.js";
import type { Chain } from "./chain-registry.js";
import type { UpstreamCall } from "./http-upstream.js";
import { describeVotes, sameRefusalOf, tallyVotes, type Vote, voteOf } from "./quorum-read.js";
import type { DisagreementPolicy } from "./upstream-pool.js";

/** JSON with object keys sorted and hex in one case: two nodes' answers compare by what they say, not how. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return typeof value === "string" && /^0x[0-9a-fA-F]*$/.test(value)
    ? JSON.stringify(value.toLowerCase())
    : JSON.stringify(value);
}

function shortAnswer(value: unknown): string {
  const text = canonicalJson(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

type Spoken = Extract<Vote<unknown>, { kind: "answer" | "refused" }>;

/** The votes grouped by what they say, largest group first. */
function groups(votes: readonly Vote<unknown>[]): Spoken[][] {
  const out: Spoken[][] = [];
  for (const vote of votes) {
    if (vote.kind === "silent") continue;
    const group = out.find(([first]) =>
      first!.kind === "answer" && vote.kind === "answer"
        ? canonicalJson(first!.value) === canonicalJson(vote.value)
        : first!.kind === "refused" && vote.kind === "refused" && sameRefusalOf(first!.error, vote.error),
    );
    if (group) group.push(vote);
    else out.push([vote]);
  }
  return out.sort((a, b) => b.length - a.length);
}

function answerOf(vote: Spoken): unknown {
  if (vote.kind === "refused") throw vote.error;
  return vote.value;
}

/**
 * Asks `n` upstreams (those a plain read would try first; one that does not answer is replaced by
 * the next) and answers what they all say. When they differ, the chain's policy decides: `error`
 * names what each said; `majority` asks the rest too and answers what more than half of those
 * that answered say; `highest_block` answers the upstream with the highest head.
 */
export async function consensusRead(
  chain: Chain,
  call: UpstreamCall,
  n: number,
  policy: DisagreementPolicy,
): Promise<unknown> {
  const queue = chain.pool.readyLabels();
  const configured = chain.pool.upstreams.length;
  if (queue.length < n)
    throw upstreamUnavailable(
      `consensus=${n}: ${queue.length} of the chain's ${configured} upstream(s) can be asked now`,
    );
  const votes: Vote<unknown>[] = [];
  const spoken = () => votes.filter((v) => v.kind !== "silent").length;
  while (spoken() < n && queue.length > 0) {
    const next = queue.splice(0, n - spoken());
    votes.push(
      ...(await Promise.all(next.map((label) => voteOf(label, () => chain.pool.callOn(label, call))))),
    );
  }
  const tally = tallyVotes(votes, n, { same: (a, b) => canonicalJson(a) === canonicalJson(b) });
  if (tally.kind === "agreed") return answerOf(tally.vote);
  if (tally.kind === "short")
    throw upstreamUnavailable(
      `consensus=${n}: only ${spoken()} upstream(s) answered ${call.method} (${describeVotes(votes, shortAnswer)})`,
    );
  if (policy === "majority") {
    votes.push(
      ...(await Promise.all(queue.map((label) => voteOf(label, () => chain.pool.callOn(label, call))))),
    );
    const [largest] = groups(votes);
    if (largest !== undefined && largest.length * 2 > spoken() && largest.length >= n)
      return answerOf(largest[0]!);
  } else if (policy === "highest_block") {
    const highest = votes
      .filter((v): v is Spoken => v.kind !== "silent")
      .map((v) => ({ vote: v, head: chain.pool.headOf(v.label) ?? -1 }))
      .sort((a, b) => b.head - a.head);
    if (highest.length > 0 && highest[0]!.head >= 0 && highest[0]!.head !== highest[1]?.head)
      return answerOf(highest[0]!.vote);
  }
  throw upstreamsDisagree(
    `consensus=${n} for ${call.method}: ${describeVotes(votes, shortAnswer)}`,
    votes.map((v) => ({
      upstream: v.label,
      said: describeVotes([v], shortAnswer).slice(v.label.length + 2),
    })),
  );
}
