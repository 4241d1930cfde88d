/** The standard signer methods (eth_accounts, eth_sign, eth_sendTransaction, ...) served from custody wallets: each by its row in signer-method-table.ts. */
import { invalidParams } from "../errors/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";
import { type SignerContext, SignerKit, type SignerMethodsOptions } from "./signer-kit.js";
import { SIGNER_METHODS } from "./signer-method-table.js";

export type { SignerContext, SignerMethodsOptions } from "./signer-kit.js";

export class SignerMethods {
  private readonly kit: SignerKit;

  constructor(options: SignerMethodsOptions) {
    this.kit = new SignerKit(options);
  }

  async handle(
    chain: Chain,
    method: string,
    params: readonly unknown[],
    context: SignerContext,
  ): Promise<unknown> {
    const row = Object.hasOwn(SIGNER_METHODS, method) ? SIGNER_METHODS[method] : undefined;
    if (row === undefined) throw invalidParams(`${method} is not a signer method`);
    return row.handle(this.kit, chain, params, context);
  }
}
