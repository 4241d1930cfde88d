/** eth_sign: raw bytes signed as an EIP-191 message by a custody address, once the policies allow it. */
import type { Hex } from "viem";
import type { SignerHandler } from "./handler.js";

export const ethSign: SignerHandler = (kit, chain, params, { owner }) =>
  kit.forNodeOr(chain, "eth_sign", params, owner, params[0] as string, async () => {
    const { account } = await kit.messageSigner(chain, "eth_sign", owner, params[0] as string, {
      kind: "message",
    });
    return account.signMessage({ message: { raw: params[1] as Hex } });
  });
