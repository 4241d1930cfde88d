/** The shape of one signer method's handler: the kit the methods share, the chain, the validated params, who asks. */
import type { Chain } from "../../upstream/chain-registry.js";
import type { SignerContext, SignerKit } from "../signer-kit.js";

export type SignerHandler = (
  kit: SignerKit,
  chain: Chain,
  params: readonly unknown[],
  context: SignerContext,
) => Promise<unknown>;
