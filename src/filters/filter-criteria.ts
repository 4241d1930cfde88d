/** Log filter criteria as stored, and how a poll turns them into one eth_getLogs range. */

export interface LogCriteria {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
  address?: string | string[];
  topics?: (string | null | (string | null)[])[];
}

/** What is wrong with criteria that passed the schema, or undefined; shared by eth_newFilter and eth_getLogs. */
export function criteriaProblem(criteria: LogCriteria): string | undefined {
  if (
    criteria.blockHash !== undefined &&
    (criteria.fromBlock !== undefined || criteria.toBlock !== undefined)
  ) {
    return "params[0] (filter) takes either blockHash or fromBlock/toBlock, not both";
  }
  const from = numericBlock(criteria.fromBlock);
  const to = numericBlock(criteria.toBlock);
  if (from !== undefined && to !== undefined && from > to) {
    return `params[0] (filter) fromBlock ${criteria.fromBlock} is after toBlock ${criteria.toBlock}`;
  }
  return undefined;
}

/** The number of a hex block parameter, or undefined for a tag. */
export function numericBlock(value: string | undefined): number | undefined {
  return value?.startsWith("0x") ? Number.parseInt(value.slice(2), 16) : undefined;
}

/** Only address and topics decide which logs match; the range comes from the poll. */
export function matchPart(criteria: LogCriteria): Pick<LogCriteria, "address" | "topics"> {
  return {
    ...(criteria.address === undefined ? {} : { address: criteria.address }),
    ...(criteria.topics === undefined ? {} : { topics: criteria.topics }),
  };
}

export const toHex = (n: number): string => `0x${n.toString(16)}`;

const same = (a: string | null | undefined, b: string | undefined): boolean =>
  a === null || a === undefined || (b !== undefined && a.toLowerCase() === b.toLowerCase());

/** Whether a log matches criteria's address and topics, as a node decides it. */
export function logMatches(criteria: LogCriteria, log: { address?: string; topics?: string[] }): boolean {
  if (criteria.address !== undefined) {
    const wanted = [criteria.address].flat();
    if (!wanted.some((a) => same(a, log.address))) return false;
  }
  const topics = criteria.topics ?? [];
  for (let i = 0; i < topics.length; i++) {
    const wanted = topics[i];
    if (wanted === null || wanted === undefined) continue;
    const actual = log.topics?.[i];
    const options = [wanted].flat();
    if (options.length === 0 || options.some((t) => t === null)) continue;
    if (!options.some((t) => same(t, actual))) return false;
  }
  return true;
}
