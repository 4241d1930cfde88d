/** The last check before value moves: the source event confirmed by a quorum and final, then the lane's limit. */
import type { Logger } from "pino";
import type { Hex } from "viem";
import type { TransportsTable } from "../store/schema.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import type { ChainTrust } from "../upstream/chain-trust.js";
import { transportOfSent } from "./endpoint-events.js";
import type { LaneLimits } from "./lane-limits.js";
import { verifySource } from "./source-quorum.js";
import type { TransportRecords } from "./transport-records.js";

/** A held transport is looked at again after this, doubling while it stays held, up to the most. */
export const HOLD_RECHECK_MIN_MS = 5_000;
export const HOLD_RECHECK_MAX_MS = 10 * 60_000;
/** Seen final by one upstream but not yet by all: an ordinary wait for the others. */
const NOT_FINAL_RECHECK_MS = 2_000;

/** The fields of a record that come from the source event: the quorum's version wins over what was stored. */
const EVENT_FIELDS = [
  "kind",
  "with_data",
  "destination_chain_id",
  "sender",
  "recipient",
  "token",
  "amount",
  "token_id",
  "payload_hash",
] as const;

export interface SourceGateOptions {
  chains: ChainRegistry;
  endpoint: Hex;
  trust: (chainId: number) => ChainTrust;
  lanes: LaneLimits;
  records: TransportRecords;
  logger: Logger;
  now: () => number;
}

export class SourceGate {
  constructor(private readonly options: SourceGateOptions) {}

  /**
   * The transport as a quorum of its source chain's upstreams shows it, when it may be delivered now;
   * undefined when it is held (the record then says why, and when it is looked at again).
   */
  async admit(row: TransportsTable): Promise<TransportsTable | undefined> {
    const { chains, records, lanes, now } = this.options;
    const source = chains.get(row.source_chain_id);
    if (!source) {
      await records.fail(row.id, `source chain ${row.source_chain_id} is not configured`);
      return undefined;
    }
    if (row.state === "queued" && row.refund_at !== null && now() >= row.refund_at) {
      // Failed first: a crash before the share is given back leaves the lane stricter, never looser.
      await records.fail(
        row.id,
        `queued on its lane past the refund deadline (release was due ${new Date(row.release_at ?? 0).toISOString()})`,
        "pending",
      );
      await lanes.giveBack(row);
      return undefined;
    }
    if (row.source_tx_hash === null)
      return this.hold(row, "awaiting_quorum", "the source transaction is not known");
    const verdict = await verifySource(
      source,
      this.options.endpoint,
      { id: row.id, source_tx_hash: row.source_tx_hash },
      this.options.trust(source.chainId),
    );
    if (verdict.kind === "not_final") {
      await records.note(row.id, { next_check_at: now() + NOT_FINAL_RECHECK_MS });
      return undefined;
    }
    if (verdict.kind === "gone") return this.hold(row, "reorged", verdict.reason);
    if (verdict.kind === "disputed") return this.hold(row, "awaiting_quorum", verdict.reason);

    const agreed = transportOfSent(source, verdict.log);
    if (agreed === undefined)
      return this.hold(row, "awaiting_quorum", "the confirmed source log does not decode");
    const changes: Partial<TransportsTable> = {
      body: agreed.body,
      source_block: verdict.block,
      source_block_hash: verdict.blockHash,
      source_confirmations: verdict.confirmedBy.length,
      next_check_at: null,
    };
    const corrected = EVENT_FIELDS.filter((field) => String(row[field]) !== String(agreed[field]));
    if (corrected.length > 0) {
      // The record came from one upstream's answer; what moves value is what the quorum shows.
      this.options.logger.warn(
        { transport: row.id, fields: corrected },
        "transport record differed from the source event its upstreams confirm; corrected",
      );
      for (const field of corrected) Object.assign(changes, { [field]: agreed[field] });
    }
    if (row.state === "awaiting_quorum" || row.state === "reorged") {
      changes.state = "sent";
      changes.error = null;
    }
    let admitted: TransportsTable = { ...row, ...changes };
    if (row.release_at === null) {
      const reservation = await lanes.reserve(admitted);
      if (reservation !== undefined) {
        admitted = { ...admitted, release_at: reservation.releaseAt, refund_at: reservation.refundAt };
        Object.assign(changes, { release_at: reservation.releaseAt, refund_at: reservation.refundAt });
      }
    }
    if (admitted.release_at !== null && admitted.release_at > now()) {
      const wake = Math.min(admitted.release_at, admitted.refund_at ?? Number.POSITIVE_INFINITY);
      this.options.logger.info(
        { transport: row.id, release_at: new Date(admitted.release_at).toISOString() },
        "transport over its lane's limit: queued",
      );
      await records.note(row.id, { ...changes, state: "queued", next_check_at: wake });
      return undefined;
    }
    if (admitted.state === "queued") changes.state = "sent";
    await records.note(row.id, changes);
    return { ...admitted, ...changes };
  }

  /** Holds the transport in `state`; a transport held again in the same state is looked at half as often. */
  private async hold(
    row: TransportsTable,
    state: "awaiting_quorum" | "reorged",
    reason: string,
  ): Promise<undefined> {
    const now = this.options.now();
    const again =
      row.state === state
        ? Math.min(HOLD_RECHECK_MAX_MS, Math.max(HOLD_RECHECK_MIN_MS, 2 * (now - row.updated_at)))
        : HOLD_RECHECK_MIN_MS;
    if (row.state !== state)
      this.options.logger.warn(
        { transport: row.id, source_chain: row.source_chain_id, reason },
        state === "awaiting_quorum"
          ? "transport held: the source chain's upstreams do not confirm its source event"
          : "transport held: its source event is no longer on the canonical chain",
      );
    await this.options.records.note(row.id, {
      state,
      error: reason.slice(0, 1000),
      next_check_at: now + again,
    });
    return undefined;
  }
}
