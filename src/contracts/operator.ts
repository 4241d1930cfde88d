/** The operator account: signs registry writes and relays transports. */
import { keccak256, type LocalAccount, toBytes } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../config/config.js";

/** Public on purpose: it only ever holds devnet ether, minted by anvil_setBalance. */
export const DEVNET_OPERATOR_KEY = keccak256(toBytes("chaingate devnet operator"));

export function operatorAccount(config: Config, onDevnet: boolean): LocalAccount | undefined {
  if (config.operatorKey !== undefined) return privateKeyToAccount(config.operatorKey);
  return onDevnet ? privateKeyToAccount(DEVNET_OPERATOR_KEY) : undefined;
}
