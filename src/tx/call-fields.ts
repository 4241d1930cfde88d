/** The fields of a transaction a caller may fix, in the pipeline's terms (eth_sendTransaction, eth_signTransaction, eth_fillTransaction). */
import type { AccessList, Hex } from "viem";

export interface CallFields {
  from: Hex;
  to: Hex | null;
  data: Hex;
  value: bigint;
  gas?: bigint;
  nonce?: number;
  accessList?: AccessList;
}
