/** eth_signTypedData_v4: an EIP-712 document signed by a custody address, its domain and any permit it grants judged by policy. */
import { permitGrants } from "../../policies/permit-grants.js";
import { readTypedData } from "../typed-data.js";
import type { SignerHandler } from "./handler.js";

export const ethSignTypedDataV4: SignerHandler = async (kit, chain, params, { owner }) => {
  // The document is checked before the account, so a malformed one is -32602 whoever asks.
  const typed = readTypedData(params[1]);
  return kit.forNodeOr(chain, "eth_signTypedData_v4", params, owner, params[0] as string, async () => {
    const { account } = await kit.messageSigner(chain, "eth_signTypedData_v4", owner, params[0] as string, {
      kind: "typed_data",
      domain: (typed.domain ?? {}) as Record<string, unknown>,
      grants: permitGrants(typed),
    });
    return account.signTypedData(typed);
  });
};
