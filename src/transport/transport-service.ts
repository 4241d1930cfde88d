/** Sends transports from a custody wallet: the source endpoint burns the tokens and emits the message. */
import { randomBytes } from "node:crypto";
import { encodeFunctionData, type Hex, keccak256, toHex } from "viem";
import { MessageEndpoint } from "../contracts/artifacts.generated.js";
import { codeAt } from "../contracts/chain-calls.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { unknownChain } from "../errors/rpc-errors.js";
import type { MemberService } from "../members/member-service.js";
import type { Signer } from "../operations/signed-input.js";
import type { Store } from "../store/database.js";
import type { TransportKind } from "../store/schema.js";
import type { TokenService } from "../tokens/token-service.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { recordEvent } from "../webhooks/outbox.js";
import { transportEvent } from "./transport-event.js";
import { newTransportRow, type SentTransport } from "./transport-row.js";

export interface TransportServiceOptions {
  store: Store;
  chains: ChainRegistry;
  members: MemberService;
  tokens: TokenService;
  system: () => SystemContracts;
  now?: () => number;
}

export interface TransportReceipt {
  transport_id: Hex;
  kind: TransportKind;
  state: "sent";
  source_chain_id: number;
  destination_chain_id: number;
  tx_hash: Hex;
}

export class TransportService {
  private readonly now: () => number;

  constructor(private readonly options: TransportServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async sendToken(
    signer: Signer,
    input: { token: Hex; to: Hex; amount?: bigint; tokenId?: bigint; destinationChainId: number; data: Hex },
    owner: string | null,
  ): Promise<TransportReceipt> {
    await this.checkDestination(signer, input.destinationChainId);
    if (input.data !== "0x")
      await this.checkReceiver(
        input.destinationChainId,
        input.to,
        "to",
        "onTokenTransport",
        "transport without data",
      );
    const standard = await this.options.tokens.standardOf(signer.chain, input.token);
    if ((standard === "ERC20") !== (input.amount !== undefined)) {
      throw new ChaingateError(
        standard === "ERC20"
          ? "token is an ERC20: give `amount`, not `token_id`"
          : "token is an ERC721: give `token_id`, not `amount`",
        { code: "INVALID_PARAMS" },
      );
    }
    const id = toHex(randomBytes(32));
    const amountOrId = input.amount ?? input.tokenId!;
    const submitted = await this.options.tokens.submit(signer, {
      to: this.options.system().endpoint,
      data: encodeFunctionData({
        abi: MessageEndpoint.abi,
        functionName: "sendToken",
        args: [id, BigInt(input.destinationChainId), input.token, input.to, amountOrId, input.data],
      }),
      value: 0n,
      kind: input.data === "0x" ? "trasport_token" : "transport_token_with_data",
      metadata: { transport_id: id, destination_chain_id: input.destinationChainId, token: input.token },
      transportId: id,
      owner,
    });
    await this.record(
      {
        id,
        kind: standard,
        with_data: input.data === "0x" ? 0 : 1,
        source_chain_id: signer.chain.chainId,
        destination_chain_id: input.destinationChainId,
        sender: signer.account.address,
        recipient: input.to,
        token: input.token,
        amount: input.amount?.toString() ?? null,
        token_id: input.tokenId?.toString() ?? null,
        payload_hash: input.data === "0x" ? null : keccak256(input.data),
        source_tx_hash: submitted.txHash,
      },
      owner,
    );
    return {
      transport_id: id,
      kind: standard,
      state: "sent",
      source_chain_id: signer.chain.chainId,
      destination_chain_id: input.destinationChainId,
      tx_hash: submitted.txHash,
    };
  }

  async sendMessage(
    signer: Signer,
    input: { destinationChainId: number; destination: Hex; payload: Hex },
    owner: string | null,
  ): Promise<TransportReceipt> {
    await this.checkDestination(signer, input.destinationChainId);
    await this.checkReceiver(input.destinationChainId, input.destination, "destination", "onMessage");
    const id = toHex(randomBytes(32));
    const submitted = await this.options.tokens.submit(signer, {
      to: this.options.system().endpoint,
      data: encodeFunctionData({
        abi: MessageEndpoint.abi,
        functionName: "sendMessage",
        args: [id, BigInt(input.destinationChainId), input.destination, input.payload],
      }),
      value: 0n,
      kind: "transport_arbitrary_message",
      metadata: { transport_id: id, destination_chain_id: input.destinationChainId },
      transportId: id,
      owner,
    });
    await this.record(
      {
        id,
        kind: "MESSAGE",
        with_data: 0,
        source_chain_id: signer.chain.chainId,
        destination_chain_id: input.destinationChainId,
        sender: signer.account.address,
        recipient: input.destination,
        token: null,
        amount: null,
        token_id: null,
        payload_hash: keccak256(input.payload),
        source_tx_hash: submitted.txHash,
      },
      owner,
    );
    return {
      transport_id: id,
      kind: "MESSAGE",
      state: "sent",
      source_chain_id: signer.chain.chainId,
      destination_chain_id: input.destinationChainId,
      tx_hash: submitted.txHash,
    };
  }

  private async checkDestination(signer: Signer, destinationChainId: number): Promise<void> {
    if (destinationChainId === signer.chain.chainId) {
      throw new ChaingateError("destination_chain_id is the source chain; use transfer_tokens on one chain", {
        code: "SAME_CHAIN",
      });
    }
    if (this.options.chains.get(destinationChainId) === undefined)
      throw unknownChain(
        String(destinationChainId),
        this.options.chains.all().map((c) => c.chainId),
      );
    if (!(await this.options.members.isMemberChain(destinationChainId))) {
      throw new ChaingateError(`no ACTIVE member is registered on chain ${destinationChainId}`, {
        code: "DESTINATION_NOT_MEMBER",
      });
    }
  }

  /**
   * A receiver that is called on delivery must be a contract there now: an address without code
   * would take the source burn and revert every delivery, found out only after the gas is spent.
   * (Code deployed after this check still delivers: the relayer retries a revert until refused.)
   */
  private async checkReceiver(
    destinationChainId: number,
    receiver: Hex,
    field: string,
    callback: string,
    instead?: string,
  ): Promise<void> {
    const chain = this.options.chains.get(destinationChainId)!;
    if ((await codeAt(chain, receiver)) !== "0x") return;
    throw new ChaingateError(
      `${field} ${receiver} has no code on chain ${destinationChainId}: delivery calls ${callback}(...) on it, ` +
        `which only a contract answers, so it would revert. Deploy the receiving contract there first` +
        `${instead ? `, or ${instead}` : ""}`,
      { code: "RECEIVER_NOT_CONTRACT", data: { field, chain_id: destinationChainId } },
    );
  }

  /** The relayer may have seen the event first (it inserts from the chain): either order ends in one row. */
  private async record(row: SentTransport, owner: string | null): Promise<void> {
    const now = this.now();
    const fresh = newTransportRow({ ...row, owner }, now);
    await this.options.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("transports")
        .values(fresh)
        .onConflict((oc) =>
          oc.column("id").doUpdateSet({
            source_tx_hash: row.source_tx_hash,
            owner,
            with_data: row.with_data,
            payload_hash: row.payload_hash,
          }),
        )
        .execute();
      await recordEvent(trx, transportEvent(fresh, "transport.sent"), now);
    });
  }
}
