/** Parsers for the inputs every signed operation shares: addresses, hex data and wei amounts. */
import { getAddress, type Hex, isAddress } from "viem";
import { badRequest } from "../errors/chaingate-error.js";

const MAX_UINT256 = (1n << 256n) - 1n;

export function parseAddress(raw: string, field: string): Hex {
  // Mixed case must be a valid EIP-55 checksum: a typo in one letter is caught, not sent.
  if (!isAddress(raw, { strict: raw !== raw.toLowerCase() && raw.slice(2) !== raw.slice(2).toUpperCase() })) {
    throw badRequest(
      "INVALID_ADDRESS",
      `${field} is not a valid address (20-byte hex, EIP-55 checksum if mixed case)`,
    );
  }
  return getAddress(raw);
}

export function parseHexData(raw: string | undefined, field: string): Hex {
  if (raw === undefined || raw === "") return "0x";
  if (!/^0x([0-9a-fA-F]{2})*$/.test(raw))
    throw badRequest("INVALID_HEX", `${field} must be 0x-prefixed hex bytes`);
  return raw.toLowerCase() as Hex;
}

export function parseWei(raw: string | undefined, field: string): bigint {
  if (raw === undefined || raw === "") return 0n;
  const text = raw.trim();
  let value: bigint;
  if (/^[0-9]{1,78}$/.test(text)) value = BigInt(text);
  else if (/^0x[0-9a-fA-F]{1,64}$/.test(text)) value = BigInt(text);
  else
    throw badRequest("INVALID_VALUE", `${field} must be a non-negative integer of wei, in decimal or 0x hex`);
  if (value > MAX_UINT256) throw badRequest("INVALID_VALUE", `${field} is larger than 2^256-1`);
  return value;
}
