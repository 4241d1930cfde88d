/**
 * The nonce-conflict guard (an EVM signer's slashing protection): one payload per (chain, address,
 * nonce), whichever instance signs, except the tracker's own replacements and cancels.
 */
import type { Transaction } from "kysely";
import type { Logger } from "pino";
import { getAddress, type Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import { PreparedQuery } from "../store/prepared-query.js";
import type { Database } from "../store/schema.js";
import { stateLiteral } from "../store/state-literal.js";
import type { Chain } from "../upstream/chain-registry.js";
import { sendRawTransaction } from "../upstream/node-reads.js";
import type { NonceLedger } from "./nonce-ledger.js";

/** Bytes handed out at a nonce (every signed transaction asks: compiled once, see PreparedQuery). */
const HANDED_OUT_AT = new PreparedQuery((db, slot) =>
  db
    .selectFrom("signed_payloads")
    .select(["tx_hash", "raw"])
    .where("chain_id", "=", slot<number>(0))
    .where("address", "=", slot<string>(1))
    .where("nonce", "=", slot<number>(2)),
);

/** Signed, unsent payloads an address may have at or past its next nonce. */
export const MAX_HANDED_OUT = 64;

/** A payload already signed at the nonce: its hash, and its bytes when eth_signTransaction handed them out. */
export interface SignedAt {
  txHash: Hex;
  raw: Hex | null;
}

export function nonceAlreadySigned(nonce: number, txHash: string): ChaingateError {
  return new ChaingateError(
    `nonce ${nonce} of this address already carries another signed transaction (${txHash}); ` +
      "chaingate signs one payload per nonce: send without a nonce, or replace it through chaingate's tracker",
    { code: "NONCE_ALREADY_SIGNED", data: { nonce, tx_hash: txHash } },
  );
}

/** Thrown inside the recording transaction (so it rolls back) when the allocated nonce was handed out. */
export class NonceHandedOut extends Error {
  constructor(
    readonly nonce: number,
    readonly raw: Hex,
  ) {
    super(`nonce ${nonce} was handed out by eth_signTransaction`);
  }
}

/** Called inside the transaction that holds the address's nonce-ledger row, so instances take turns. */
export class NonceGuard {
  /**
   * What else was signed at `nonce`: a recorded transaction that is not failed (a failed one was
   * refused, or its nonce went to another), or bytes eth_signTransaction handed out. Undefined
   * when nothing was, or only `txHash` itself (the same payload signed again is the same bytes).
   */
  async otherAt(
    trx: Transaction<Database>,
    chainId: number,
    address: string,
    nonce: number,
    txHash: string,
  ): Promise<SignedAt | undefined> {
    const recorded = await trx
      .selectFrom("transactions")
      .select("tx_hash")
      .where("chain_id", "=", chainId)
      .where("from_address", "=", getAddress(address))
      .where("nonce", "=", nonce)
      .where("state", "!=", stateLiteral("failed"))
      .where("tx_hash", "!=", txHash)
      .executeTakeFirst();
    if (recorded) return { txHash: recorded.tx_hash as Hex, raw: null };
    const handed = await this.handedOutAt(trx, chainId, address, nonce);
    return handed && handed.txHash !== txHash ? handed : undefined;
  }

  /** Bytes eth_signTransaction handed out at `nonce`, if any. */
  async handedOutAt(
    trx: Transaction<Database>,
    chainId: number,
    address: string,
    nonce: number,
  ): Promise<SignedAt | undefined> {
    const [row] = (await HANDED_OUT_AT.execute(trx, [chainId, address.toLowerCase(), nonce])).rows;
    return row ? { txHash: row.tx_hash as Hex, raw: row.raw as Hex } : undefined;
  }

  /**
   * Records bytes handed out by eth_signTransaction; a second, different payload at the nonce is
   * refused. Payloads at or past the ledger's next nonce (`next`) are held for the address until a
   * send moves past them: at most MAX_HANDED_OUT of them, so the rows an address holds stay bounded
   * by its real nonce history plus that.
   */
  async handOut(
    trx: Transaction<Database>,
    chainId: number,
    address: string,
    nonce: number,
    signed: { txHash: Hex; raw: Hex },
    now: number,
    next: number,
  ): Promise<void> {
    const other = await this.otherAt(trx, chainId, address, nonce, signed.txHash);
    if (other) throw nonceAlreadySigned(nonce, other.txHash);
    const ahead = await trx
      .selectFrom("signed_payloads")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("chain_id", "=", chainId)
      .where("address", "=", address.toLowerCase())
      .where("nonce", ">=", next)
      .executeTakeFirstOrThrow();
    if (nonce >= next && Number(ahead.n) >= MAX_HANDED_OUT)
      throw new ChaingateError(
        `${MAX_HANDED_OUT} signed payloads of this address at or past its next nonce (${next}) are not sent yet`,
        { code: "HANDED_OUT_LIMIT", data: { limit: MAX_HANDED_OUT, next_nonce: next } },
      );
    await trx
      .insertInto("signed_payloads")
      .values({
        chain_id: chainId,
        address: address.toLowerCase(),
        nonce,
        tx_hash: signed.txHash,
        raw: signed.raw,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(["chain_id", "address", "nonce"]).doNothing())
      .execute();
  }
}

/**
 * The ledger's next nonce carries bytes eth_signTransaction handed out: they are that nonce's one
 * payload, so they are broadcast (whoever holds them may not have sent them yet, and the nonces
 * after it would wait behind a gap) and the ledger moves past it.
 */
export async function passHandedOut(
  chain: Chain,
  address: string,
  handed: NonceHandedOut,
  deps: { ledger: NonceLedger; store: Store; logger: Logger },
): Promise<void> {
  await sendRawTransaction(chain, handed.raw).catch((error: unknown) =>
    deps.logger.info(
      { err: error, nonce: handed.nonce },
      "handed-out transaction not taken on resend (already sent, or refused); moving past its nonce",
    ),
  );
  await deps.ledger.raiseTo(deps.store.db, chain.chainId, address, handed.nonce + 1);
}
