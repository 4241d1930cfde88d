/** The fields every signed Members/Token Management operation shares, and turning them into a signer. */
import { type Static, Type } from "@sinclair/typebox";
import type { LocalAccount } from "viem";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import type { WalletService } from "../wallets/wallet-service.js";
import type { OperationContext } from "./operation.js";

export const ChainIdField = Type.Union(
  [
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    Type.String({ pattern: "^(0x[0-9a-fA-F]{1,13}|[0-9]{1,15})$" }),
  ],
  // The same forms ChainRegistry's parseChainSelector reads (chain_id query, X-Chain-Id header).
  { description: "a configured chain id, as a number or a decimal or 0x string" },
);

export const SignerFields = {
  wallet_id: Type.String({ minLength: 1, maxLength: 200, description: "custody wallet that signs" }),
  password: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "the wallet's password (KEYSTORE_V3; a PKCS11 wallet takes none)",
    }),
  ),
  index: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2 ** 31 - 1,
      description: "address index in the wallet (default 0)",
    }),
  ),
  chain_id: Type.Optional({ ...ChainIdField, description: "chain to act on (default: the home chain)" }),
};

const SignerObject = Type.Object(SignerFields);
export type SignerInput = Static<typeof SignerObject>;

export interface Signer {
  chain: Chain;
  account: LocalAccount;
  walletId: string;
  index: number;
  /** The run's idempotency reference, carried into every transaction signed for it. */
  idempotencyRef: string | undefined;
}

/** Picks the chain first (an unknown chain costs no KDF run), then opens the wallet's key. */
export async function unlockSigner(
  wallets: WalletService,
  chains: ChainRegistry,
  input: SignerInput,
  context: OperationContext,
): Promise<Signer> {
  const chain = chains.select(input.chain_id, undefined);
  const index = input.index ?? 0;
  // An empty password is PASSWORD_REQUIRED for a KEYSTORE_V3 wallet, and what a PKCS11 wallet takes.
  const unlocked = await wallets.unlock(input.wallet_id, index, input.password ?? "", context.owner);
  return {
    chain,
    account: unlocked.account,
    walletId: input.wallet_id,
    index,
    idempotencyRef: context.idempotencyRef,
  };
}
