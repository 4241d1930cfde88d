/** Token amounts and ids: base units, as a decimal string or a safe integer, never above 2^256-1. */
import { Type } from "@sinclair/typebox";
import { badRequest } from "../errors/chaingate-error.js";

export const UintField = (description: string) =>
  Type.Union(
    [
      Type.String({ pattern: "^[0-9]{1,78}$" }),
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    ],
    {
      description: `${description} (base units, decimal string or integer)`,
      examples: ["1000000"],
    },
  );

const MAX_UINT256 = (1n << 256n) - 1n;

export function toUint(raw: string | number, field: string): bigint {
  const value = BigInt(raw);
  if (value > MAX_UINT256) throw badRequest("INVALID_AMOUNT", `${field} is larger than 2^256-1`);
  return value;
}
