/** eth_signAuthorization: an EIP-7702 authorization signed by a custody address, for a chain that can use it. */
import { invalidParams } from "../../errors/rpc-errors.js";
import { toRpcAuthorization } from "../../tx/authorizations.js";
import { readAuthorizationList } from "../transaction-request.js";
import type { SignerHandler } from "./handler.js";

export const ethSignAuthorization: SignerHandler = async (kit, chain, params, { owner }) => {
  const [item] = readAuthorizationList([params[1]]);
  if (item!.kind !== "request")
    throw invalidParams("authorization: give the delegate, chainId and nonce to sign, not a signature");
  const signed = await kit.options.authorizations.sign(
    chain,
    owner,
    {
      authority: params[0] as `0x${string}`,
      delegate: item!.delegate,
      ...(item!.chainId === undefined ? {} : { chainId: item!.chainId }),
      ...(item!.nonce === undefined ? {} : { nonce: item!.nonce }),
    },
    "eth_signAuthorization",
    kit.signerOf,
  );
  return toRpcAuthorization(signed);
};
