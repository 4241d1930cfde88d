/** Log filter criteria as stored, and how a poll turns them into one eth_getLogs range. */
import { invalidParams } from "../rpc/rpc-errors.js";

export interface LogCriteria {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
  address?: string | string[];
  topics?: (string | null | (string | null)[])[];
}

export function checkCriteria(criteria: LogCriteria): void {
  if (
    criteria.blockHash !== undefined &&
    (criteria.fromBlock !== undefined || criteria.toBlock !== undefined)
  ) {
    throw invalidParams("a filter takes either blockHash or fromBlock/toBlock, not both");
  }
  const from = numericBlock(criteria.fromBlock);
  const to = numericBlock(criteria.toBlock);
  if (from !== undefined && to !== undefined && from > to) {
    throw invalidParams(`fromBlock ${criteria.fromBlock} is after toBlock ${criteria.toBlock}`);
  }
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
