/** EIP-7702 authorizations a custody transaction carries: signed ones passed on, the sender's own signed at its nonce + 1. */
import { getAddress, type Hex, type LocalAccount, type SignedAuthorization, toHex } from "viem";
import { invalidParams } from "../errors/rpc-errors.js";

/** One authorization and the address that signed it (its authority). */
export interface AuthorizationEntry {
  authority: Hex;
  authorization: SignedAuthorization;
}

/** What a type-4 transaction will carry. */
export interface AuthorizationPlan {
  /** Signed already: by another custody address of the tenant, or handed in signed by the caller. */
  signed: AuthorizationEntry[];
  /**
   * The sender's own: signed by the pipeline once the transaction's nonce N is allocated, at N + 1
   * (the sender's nonce has moved past N when the authorization list is processed).
   */
  self?: { delegate: Hex; chainId: number };
}

/** An authorization in the JSON-RPC shape (execution-apis' AuthorizationListEntry). */
export interface RpcAuthorization {
  chainId: Hex;
  address: Hex;
  nonce: Hex;
  yParity: Hex;
  r: Hex;
  s: Hex;
}

export function toRpcAuthorization(a: SignedAuthorization): RpcAuthorization {
  return {
    chainId: toHex(a.chainId),
    address: a.address,
    nonce: toHex(a.nonce),
    yParity: toHex(a.yParity ?? (a.v === 28n ? 1 : 0)),
    r: a.r,
    s: a.s,
  };
}

export function fromRpcAuthorization(a: RpcAuthorization): SignedAuthorization {
  return {
    chainId: Number(BigInt(a.chainId)),
    address: getAddress(a.address),
    nonce: Number(BigInt(a.nonce)),
    yParity: Number(BigInt(a.yParity)),
    r: a.r,
    s: a.s,
  };
}

/** The account's signature over the authorization (EIP-7702's 0x05-prefixed hash). */
export async function signAuthorizationWith(
  account: LocalAccount,
  request: { delegate: Hex; chainId: number; nonce: number },
): Promise<SignedAuthorization> {
  if (!account.signAuthorization) throw invalidParams("this account cannot sign EIP-7702 authorizations");
  return account.signAuthorization({
    contractAddress: request.delegate,
    chainId: request.chainId,
    nonce: request.nonce,
  });
}

/** Stored with the transaction (metadata), so a fee bump carries the same list and the tracker knows the authorities. */
export interface StoredAuthorization extends RpcAuthorization {
  authority: Hex;
}

export function storedAuthorizations(entries: readonly AuthorizationEntry[]): StoredAuthorization[] {
  return entries.map((e) => ({ authority: e.authority, ...toRpcAuthorization(e.authorization) }));
}

/** The authorizations a stored transaction carried (none for other transactions). */
export function authorizationsOf(metadata: Record<string, unknown> | undefined): AuthorizationEntry[] {
  const list = metadata?.authorizations;
  if (!Array.isArray(list)) return [];
  return (list as StoredAuthorization[]).map(({ authority, ...rpc }) => ({
    authority,
    authorization: fromRpcAuthorization(rpc),
  }));
}

/** An entry of `authorizationList`: signed already, or a request for a custody address to sign. */
export type AuthorizationItem =
  | { kind: "signed"; authorization: SignedAuthorization }
  | {
      kind: "request";
      delegate: Hex;
      /** Absent: this chain. 0: every chain. */
      chainId?: number;
      /** Absent: the authority's next nonce as chaingate counts it. */
      nonce?: number;
      /** The custody address that signs; absent: the transaction's sender. */
      authority?: Hex;
    };
