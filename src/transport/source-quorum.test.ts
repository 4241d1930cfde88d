import fc from "fast-check";
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { requiredVotes } from "../upstream/quorum-read.js";
import { type SourceVote, tally } from "./source-quorum.js";

const LOG = {
  address: "0x0000000000000000000000000000000000000e0e" as Hex,
  topics: ["0x01" as Hex],
  data: "0x" as Hex,
  blockNumber: "0xa" as Hex,
  transactionHash: "0xaa" as Hex,
};
const final = (label: string, key = "k"): SourceVote => ({
  label,
  kind: "final",
  key,
  log: LOG,
  blockHash: "0xbb",
});
const notFinal = (label: string, key = "k"): SourceVote => ({ label, kind: "not_final", key, block: 10 });
const absent = (label: string, head?: number): SourceVote => ({
  label,
  kind: "absent",
  why: "no receipt",
  ...(head === undefined ? {} : { head }),
});
const silent = (label: string): SourceVote => ({ label, kind: "silent", why: "timeout" });

describe("the quorum over a source event's votes", () => {
  it("the default needs every usable upstream, and at least 2 where 2 or more are configured", () => {
    expect(requiredVotes(undefined, 1, 1)).toBe(1);
    expect(requiredVotes(undefined, 2, 2)).toBe(2);
    // One of two is down: the one left is not enough (the honest nodes taken down, a forger left).
    expect(requiredVotes(undefined, 1, 2)).toBe(2);
    expect(requiredVotes(undefined, 3, 5)).toBe(3);
    expect(requiredVotes(2, 3, 3)).toBe(2);
  });

  it("confirms only when enough upstreams show the same final log", () => {
    expect(tally([final("a"), final("b")], 2)).toMatchObject({ kind: "confirmed", confirmedBy: ["a", "b"] });
    expect(tally([final("a")], 1).kind).toBe("confirmed");
  });

  it("a log one upstream shows and another denies is disputed, never confirmed", () => {
    const verdict = tally([final("forger"), absent("honest", 20)], 2);
    expect(verdict.kind).toBe("disputed");
    expect(verdict.kind === "disputed" && verdict.reason).toContain("honest: no receipt");
    // Even where one confirmation would be a quorum, a different version of the event is a dispute.
    expect(tally([final("a", "one"), final("b", "two")], 1).kind).toBe("disputed");
    expect(tally([final("a"), notFinal("b", "other")], 1).kind).toBe("disputed");
  });

  it("an upstream that did not answer counts against the quorum", () => {
    expect(tally([final("a"), silent("b")], 2).kind).toBe("disputed");
    expect(tally([final("a"), silent("b")], 1).kind).toBe("confirmed");
  });

  it("an upstream with no receipt whose head is below the event is behind, not a denial", () => {
    expect(tally([final("a"), absent("b", 5)], 2).kind).toBe("not_final");
    expect(tally([notFinal("a"), notFinal("b")], 2).kind).toBe("not_final");
  });

  it("when a quorum answers and none has the event, it is gone (reorged away)", () => {
    expect(tally([absent("a", 20), absent("b", 20)], 2).kind).toBe("gone");
    expect(tally([absent("a", 20)], 1).kind).toBe("gone");
    expect(tally([absent("a", 20), silent("b")], 2).kind).toBe("disputed");
  });

  it("never confirms with fewer final votes than required, or with two versions of the event (property)", () => {
    const vote = fc.oneof(
      fc.record({ label: fc.string(), kind: fc.constant("final" as const), key: fc.constantFrom("x", "y") }),
      fc.record({
        label: fc.string(),
        kind: fc.constant("not_final" as const),
        key: fc.constantFrom("x", "y"),
        block: fc.integer({ min: 0, max: 30 }),
      }),
      fc.record({
        label: fc.string(),
        kind: fc.constant("absent" as const),
        why: fc.constant("no receipt"),
        head: fc.integer({ min: 0, max: 30 }),
      }),
      fc.record({ label: fc.string(), kind: fc.constant("silent" as const), why: fc.constant("down") }),
    );
    fc.assert(
      fc.property(fc.array(vote, { maxLength: 6 }), fc.integer({ min: 1, max: 6 }), (raw, required) => {
        const votes = raw.map((v) =>
          v.kind === "final" ? { ...v, log: LOG, blockHash: "0xbb" as Hex } : v,
        ) as SourceVote[];
        const verdict = tally(votes, required);
        if (verdict.kind !== "confirmed") return;
        const finals = votes.filter((v) => v.kind === "final");
        const keys = new Set(
          votes.flatMap((v) => (v.kind === "final" || v.kind === "not_final" ? [v.key] : [])),
        );
        expect(finals.length).toBeGreaterThanOrEqual(required);
        expect(keys.size).toBe(1);
      }),
    );
  });
});
