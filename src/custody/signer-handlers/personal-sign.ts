/** personal_sign: a message (hex bytes, or text as its UTF-8 bytes) signed by a custody address, with geth's optional password. */
import type { Hex } from "viem";
import type { SignerHandler } from "./handler.js";

const MESSAGE_HEX = /^0x([0-9a-fA-F]{2})*$/;

/** personal_sign's data is hex bytes; plain text (as some clients send) is signed as its UTF-8 bytes. */
const messageOf = (data: string): { raw: Hex } | string =>
  MESSAGE_HEX.test(data) ? { raw: data as Hex } : data;

export const personalSign: SignerHandler = (kit, chain, params, { owner }) =>
  kit.forNodeOr(chain, "personal_sign", params, owner, params[1] as string, async () => {
    // geth's optional third parameter: the password, for this signature only (web3.js sends it).
    const password = params[2] as string | undefined;
    const { account } = await kit.messageSigner(
      chain,
      "personal_sign",
      owner,
      params[1] as string,
      { kind: "message" },
      password,
    );
    return account.signMessage({ message: messageOf(params[0] as string) });
  });
