/** EIP-7702 authorizations signed by the tenant's custody addresses, each judged by the policies (`delegates`) and audited. */
import { getAddress, type Hex, type LocalAccount, type SignedAuthorization } from "viem";
import { recoverAuthorizationAddress } from "viem/utils";
import { invalidParams } from "../errors/rpc-errors.js";
import type { PolicyGuard } from "../policies/policy-guard.js";
import { requirePrague } from "../upstream/chain-features.js";
import type { Chain } from "../upstream/chain-registry.js";
import {
  type AuthorizationEntry,
  type AuthorizationItem,
  type AuthorizationPlan,
  signAuthorizationWith,
} from "./authorizations.js";

export interface AuthorizationRequest {
  /** The custody address that signs (the account to be delegated). */
  authority: Hex;
  delegate: Hex;
  /** Absent: the chain the call goes to. 0: every chain. */
  chainId?: number;
  /** Absent: the authority's next nonce as chaingate counts it. */
  nonce?: number;
}

/** The tenant's signer for an address: unlocked (or unattended), else an error saying why not. */
export type SignerOf = (
  owner: string | null,
  address: Hex,
) => Promise<{ account: LocalAccount; walletId: string }>;

export interface CustodyAuthorizationsOptions {
  guard: PolicyGuard;
  /** The address's next nonce, its queued transactions included (the pipeline's ledger). */
  nextNonce: (chain: Chain, address: string) => Promise<number>;
}

export class CustodyAuthorizations {
  constructor(private readonly options: CustodyAuthorizationsOptions) {}

  /** One authorization signed by a custody address (unlocked, or unattended), once the policies allow it. */
  async sign(
    chain: Chain,
    owner: string | null,
    request: AuthorizationRequest,
    via: string,
    signerOf: SignerOf,
  ): Promise<SignedAuthorization> {
    // An authorization for a chain that cannot use it is refused before anything else happens.
    await requirePrague(chain, "an EIP-7702 authorization");
    const signer = await signerOf(owner, request.authority);
    const chainId = request.chainId ?? chain.chainId;
    const nonce = request.nonce ?? (await this.options.nextNonce(chain, signer.account.address));
    await this.judge(chain, owner, signer.walletId, signer.account.address, via, {
      delegate: request.delegate,
      chainId,
      nonce,
    });
    return signAuthorizationWith(signer.account, { delegate: request.delegate, chainId, nonce });
  }

  /**
   * What a custody transaction from `from` carries: signed entries as given (their authority
   * recovered), requests signed now by their authority, and the sender's own request (with no
   * nonce) left for the pipeline to sign at the transaction's nonce + 1.
   */
  async plan(
    chain: Chain,
    owner: string | null,
    from: { address: Hex; walletId: string },
    items: readonly AuthorizationItem[],
    via: string,
    signerOf: SignerOf,
  ): Promise<AuthorizationPlan> {
    if (items.length > 0) await requirePrague(chain, "a type-4 (EIP-7702) transaction");
    const signed: AuthorizationEntry[] = [];
    let self: AuthorizationPlan["self"];
    const authorities = new Set<string>();
    for (const [i, item] of items.entries()) {
      if (item.kind === "signed") {
        const authority = await recoverAuthorizationAddress({ authorization: item.authorization }).catch(
          () => {
            throw invalidParams(`authorizationList[${i}]: the signature does not recover to an address`);
          },
        );
        signed.push({ authority, authorization: item.authorization });
        continue;
      }
      const authority = getAddress(item.authority ?? from.address);
      // Only the last authorization of an authority can take effect: two are a mistake, refused.
      if (authorities.has(authority))
        throw invalidParams(`authorizationList[${i}]: ${authority} authorizes twice`);
      authorities.add(authority);
      if (authority === getAddress(from.address) && item.nonce === undefined) {
        const chainId = item.chainId ?? chain.chainId;
        await this.judge(chain, owner, from.walletId, authority, via, { delegate: item.delegate, chainId });
        self = { delegate: item.delegate, chainId };
        continue;
      }
      const authorization = await this.sign(
        chain,
        owner,
        {
          authority,
          delegate: item.delegate,
          ...(item.chainId === undefined ? {} : { chainId: item.chainId }),
          ...(item.nonce === undefined ? {} : { nonce: item.nonce }),
        },
        via,
        signerOf,
      );
      signed.push({ authority, authorization });
    }
    return self === undefined ? { signed } : { signed, self };
  }

  /** The `delegates` rule, with the decision in the audit log (POLICY_DENIED when refused). */
  private judge(
    chain: Chain,
    owner: string | null,
    walletId: string,
    address: string,
    via: string,
    delegation: { delegate: Hex; chainId: number; nonce?: number },
  ): Promise<void> {
    return this.options.guard.message(
      { apiKeyId: owner, walletId, address, operation: via, chainId: chain.chainId },
      { kind: "authorization", delegation: { ...delegation, delegate: delegation.delegate.toLowerCase() } },
    );
  }
}
