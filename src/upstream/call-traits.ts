/** What the pool and a node connection must know of a method; the method table says it per row (rpc/method-table.ts), the composition root hands it down. */

export interface CallTraits {
  /** A null or empty answer may only mean the node has not seen the block yet: upstreams ahead are asked too. */
  readonly behind: boolean;
  /** A send the node may have taken before a connection dropped: never asked again on a fresh connection. */
  readonly send: boolean;
  /** A plain value, the same for every caller in one turn: identical calls share one call of the turn's batch. */
  readonly shared: boolean;
  /** A read with no effect anywhere (a cacheable or shared read): it may be asked of two upstreams at once (hedged). */
  readonly pure: boolean;
  /** The position of the param naming the block whose state the call reads (a pruned node may not hold it); undefined when none. */
  readonly stateAt?: number | undefined;
}

export type TraitsOf = (method: string) => CallTraits;
