/** Reads MessageSent from a chain's endpoint up to its confirmed head, recording each transport once. */
import type { Hex } from "viem";
import type { Store } from "../store/database.js";
import type { Chain } from "../upstream/chain-registry.js";
import type { ChainTrust } from "../upstream/chain-trust.js";
import { finalBlock } from "../upstream/final-block.js";
import { FIRST_SCAN_DEPTH, sentEvents, transportOfSent } from "./endpoint-events.js";
import type { TransportRecords } from "./transport-records.js";

/** Blocks one eth_getLogs covers. */
const SCAN_SPAN = 2_000;

export class SourceScanner {
  constructor(
    private readonly options: {
      store: Store;
      records: TransportRecords;
      endpoint: Hex;
      /** Each chain's finality rule: events are recorded once their block is final by it. */
      trust: (chainId: number) => ChainTrust;
      now: () => number;
    },
  ) {}

  /** The cursor is per chain and endpoint, so a redeployed endpoint is scanned from its own start. */
  async scan(chain: Chain): Promise<void> {
    const { store, endpoint } = this.options;
    const key = endpoint.toLowerCase();
    const safe = await finalBlock(chain, this.options.trust(chain.chainId).finality);
    if (safe < 0) return;
    const from = await this.cursor(chain, key, Math.max(0, safe - FIRST_SCAN_DEPTH));
    for (let next = from; next <= safe; ) {
      const to = Math.min(safe, next + SCAN_SPAN - 1);
      for (const log of await sentEvents(chain, endpoint, next, to)) {
        const sent = transportOfSent(chain, log);
        if (sent !== undefined) await this.options.records.recordSent(sent);
      }
      await store.db
        .updateTable("relayer_cursors")
        .set({ next_block: to + 1, updated_at: this.options.now() })
        .where("chain_id", "=", chain.chainId)
        .where("endpoint", "=", key)
        .where("next_block", "<", to + 1)
        .execute();
      next = to + 1;
    }
  }

  /** Where the last scan stopped; a chain never scanned starts `FIRST_SCAN_DEPTH` blocks back. */
  private async cursor(chain: Chain, endpoint: string, start: number): Promise<number> {
    const { store } = this.options;
    const cursor = await store.db
      .selectFrom("relayer_cursors")
      .select("next_block")
      .where("chain_id", "=", chain.chainId)
      .where("endpoint", "=", endpoint)
      .executeTakeFirst();
    if (cursor) return cursor.next_block;
    await store.db
      .insertInto("relayer_cursors")
      .values({ chain_id: chain.chainId, endpoint, next_block: start, updated_at: this.options.now() })
      .onConflict((oc) => oc.columns(["chain_id", "endpoint"]).doNothing())
      .execute();
    return start;
  }
}
