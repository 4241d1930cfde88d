/** Start-up of one configured chain: its upstreams' chain ids probed, waiting while none answers, mismatches quarantined. */
import type { Logger } from "pino";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { TraitsOf } from "./call-traits.js";
import type { Chain } from "./chain-registry.js";
import { HeadTracker } from "./head-tracker.js";
import { HttpUpstream } from "./http-upstream.js";
import { checkedResult } from "./node-reads.js";
import { type ConsensusDefaults, UpstreamPool } from "./upstream-pool.js";

export interface ChainEntry {
  chainId?: number | undefined;
  name?: string | undefined;
  urls: string[];
  /** The extra namespaces (debug, trace, txpool) each URL is marked for; none when absent. */
  namespaces?: ReadonlyMap<string, ReadonlySet<string>> | undefined;
  /** Hedged reads: off (`false`), after a fixed delay, or (absent, `{}`) after the upstream's observed p90. */
  hedge?: false | { readonly afterMs?: number } | undefined;
  /** Upstreams that must agree (custody reads, relayed events); absent: every usable one, at least 2. */
  quorum?: number | undefined;
  /** Consensus reads by default, per method, and the chain's disagreement policy. */
  consensus?: ConsensusDefaults | undefined;
}

export interface ResolveOptions {
  timeoutMs: number;
  headPollMs: number;
  logger: Logger;
  /** Per method: asked ahead when empty, never repeated, shared in a turn (the method table's traits). */
  traits: TraitsOf;
  /** Between two probes while no upstream answers (doubling up to this). */
  maxBackoffMs?: number;
  /** Stops waiting (shutdown during start-up). */
  signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The chain id most answers agree on (the configured one when given); on a tie, that of the
 * upstream listed first, so the outcome never depends on which node answered faster.
 */
function expectedId(entry: ChainEntry, answers: ReadonlyMap<string, number>): number | undefined {
  if (entry.chainId !== undefined) return entry.chainId;
  const counts = new Map<number, number>();
  for (const url of entry.urls) {
    const id = answers.get(url);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  let best: number | undefined;
  for (const [id, n] of counts) if (best === undefined || n > counts.get(best)!) best = id;
  return best;
}

/**
 * Asks every upstream for eth_chainId until at least one answers the chain's id. The others need not
 * be up: the pool verifies each on first contact and never serves from one with another chain id.
 */
export async function resolveChain(entry: ChainEntry, options: ResolveOptions): Promise<Chain> {
  const { logger } = options;
  const probes = entry.urls.map(
    (url) => new HttpUpstream(url, Math.min(options.timeoutMs, 5_000), options.traits),
  );
  const answers = new Map<string, number>();
  const what = entry.chainId === undefined ? "the home chain" : `chain ${entry.chainId}`;
  let expected: number | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      await Promise.all(
        probes.map(async (probe) => {
          if (answers.has(probe.url)) return;
          try {
            answers.set(
              probe.url,
              Number(
                BigInt(checkedResult("eth_chainId", await probe.call({ method: "eth_chainId", params: [] }))),
              ),
            );
          } catch {
            // Not up yet: asked again below, or verified by the pool once it answers.
          }
        }),
      );
      expected = expectedId(entry, answers);
      if (expected !== undefined && [...answers.values()].includes(expected)) break;
      if (answers.size === probes.length) {
        const labels = probes.map((p) => `${p.label}: ${answers.get(p.url)}`).join(", ");
        throw new ChaingateError(`no upstream of ${what} reports chain id ${expected} (${labels})`, {
          code: "CHAIN_ID_MISMATCH",
        });
      }
      if (options.signal?.aborted) throw new ChaingateError("start-up aborted", { code: "ABORTED" });
      if (attempt % 10 === 0)
        logger.warn(
          { upstreams: probes.filter((p) => !answers.has(p.url)).map((p) => p.label) },
          `no upstream of ${what} answers yet; waiting for one`,
        );
      await sleep(Math.min(250 * 2 ** Math.min(attempt, 5), options.maxBackoffMs ?? 2_000));
    }
  } finally {
    await Promise.all(probes.map((p) => p.close()));
  }
  const chainId = expected;
  const pool = new UpstreamPool(chainId, entry.urls, options.timeoutMs, options.traits, {
    verified: answers,
    namespaces: entry.namespaces,
    hedge: entry.hedge,
    quorum: entry.quorum,
    consensus: entry.consensus,
  });
  const log = logger.child({ chainId });
  pool.listen(({ label, status, reportedChainId }) => {
    if (status === "quarantined")
      log.error({ upstream: label, reportedChainId }, "upstream reports another chain id; quarantined");
    else if (status === "verified") log.info({ upstream: label }, "upstream verified; serving from it");
  });
  for (const s of pool.stats()) {
    if (s.status === "quarantined")
      log.error(
        { upstream: s.label, reportedChainId: s.reportedChainId },
        "upstream reports another chain id; quarantined",
      );
    else if (s.status === "unverified")
      log.warn(
        { upstream: s.label },
        "upstream did not answer at start; it is used once it answers this chain's id",
      );
  }
  return {
    chainId,
    name: entry.name ?? `chain-${chainId}`,
    pool,
    head: new HeadTracker(pool, options.headPollMs, logger),
  };
}
