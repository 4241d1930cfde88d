/** Members: registered in the on-chain registry by the operator key; the chain is the record, the store adds tx hashes. */
import { decodeEventLog, encodeFunctionData, getAddress, type Hex, zeroAddress } from "viem";
import { MemberRegistry } from "../contracts/artifacts.generated.js";
import { readContract, waitForReceipt } from "../contracts/chain-calls.js";
import { explainRevert } from "../contracts/contract-errors.js";
import { submitAsOperator } from "../contracts/operator-submit.js";
import type { SystemContracts } from "../contracts/system-contracts.js";
import { badRequest, ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";

export const MEMBER_ROLES = ["PARTICIPANT", "ISSUER", "AUDITOR"] as const;
export const MEMBER_STATUSES = ["ACTIVE", "SUSPENDED"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

export interface MemberRecord {
  id: number;
  name: string;
  chain_id: number;
  role: MemberRole;
  status: MemberStatus;
  owner: string;
  created_at: string;
  updated_at: string;
  tx_hash: string | null;
}

export interface MemberServiceOptions {
  store: Store;
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  system: () => SystemContracts;
}

const PAGE = 200n;

export class MemberService {
  constructor(private readonly options: MemberServiceOptions) {}

  async register(
    input: { name: string; chain_id: number; role: MemberRole; owner?: Hex },
    context: { owner: string | null; idempotencyRef: string | undefined },
  ): Promise<MemberRecord> {
    const tenant = context.owner;
    const { chains, pipeline, store } = this.options;
    const system = this.options.system();
    if (chains.get(input.chain_id) === undefined) {
      throw badRequest(
        "UNKNOWN_CHAIN",
        `chain_id ${input.chain_id} is not a chain this service is configured for`,
      );
    }
    const home = chains.home;
    if ((await readContract(home, system.registry, MemberRegistry.abi, "idOf", [input.name])) !== 0n) {
      throw memberNameTaken(input.name);
    }
    const owner = input.owner ?? system.operator.address;
    let submitted: Awaited<ReturnType<TransactionPipeline["submit"]>>;
    try {
      submitted = await submitAsOperator(pipeline, system.operator, {
        chain: home,
        to: system.registry,
        data: encodeFunctionData({
          abi: MemberRegistry.abi,
          functionName: "register",
          args: [input.name, BigInt(input.chain_id), MEMBER_ROLES.indexOf(input.role), owner],
        }),
        kind: "register_new_member",
        metadata: { name: input.name, member_chain_id: input.chain_id, role: input.role },
        owner: tenant,
        idempotencyRef: context.idempotencyRef,
      });
    } catch (error) {
      throw explainRevert(error);
    }
    const receipt = await waitForReceipt(home, submitted.txHash);
    const event = receipt.logs
      .filter((log) => log.address.toLowerCase() === system.registry.toLowerCase())
      .map((log) => decodeEventLog({ abi: MemberRegistry.abi, data: log.data, topics: log.topics as [Hex] }))
      .find((decoded) => decoded.eventName === "MemberRegistered");
    if (receipt.status !== "0x1" || event === undefined) {
      // Mined but reverted: another registration took the name between our check and the block.
      throw memberNameTaken(input.name);
    }
    const id = Number((event.args as { id: bigint }).id);
    await store.db
      .insertInto("members")
      .values({
        registry: system.registry.toLowerCase(),
        member_id: id,
        name: input.name,
        tx_hash: submitted.txHash,
        owner: tenant,
        created_at: Date.now(),
      })
      .onConflict((oc) => oc.columns(["registry", "member_id"]).doNothing())
      .execute();
    const [member] = await this.read(BigInt(id - 1), 1n);
    return member!;
  }

  async list(
    filter: { status?: MemberStatus; role?: MemberRole; chain_id?: number } = {},
  ): Promise<MemberRecord[]> {
    const count = await readContract(
      this.options.chains.home,
      this.options.system().registry,
      MemberRegistry.abi,
      "count",
      [],
    );
    const members: MemberRecord[] = [];
    for (let offset = 0n; offset < count; offset += PAGE) members.push(...(await this.read(offset, PAGE)));
    return members.filter(
      (m) =>
        (filter.status === undefined || m.status === filter.status) &&
        (filter.role === undefined || m.role === filter.role) &&
        (filter.chain_id === undefined || m.chain_id === filter.chain_id),
    );
  }

  /** Transports may only go to a chain an ACTIVE member is registered on. */
  async isMemberChain(chainId: number): Promise<boolean> {
    return (await this.list({ status: "ACTIVE", chain_id: chainId })).length > 0;
  }

  private async read(offset: bigint, limit: bigint): Promise<MemberRecord[]> {
    const system = this.options.system();
    const rows = await readContract(this.options.chains.home, system.registry, MemberRegistry.abi, "page", [
      offset,
      limit,
    ]);
    if (rows.length === 0) return [];
    const hashes = new Map(
      (
        await this.options.store.db
          .selectFrom("members")
          .select(["member_id", "tx_hash"])
          .where("registry", "=", system.registry.toLowerCase())
          .where("member_id", ">=", Number(offset) + 1)
          .where("member_id", "<=", Number(offset) + rows.length)
          .execute()
      ).map((r) => [r.member_id, r.tx_hash]),
    );
    return rows.map((m) => ({
      id: Number(m.id),
      name: m.name,
      chain_id: Number(m.chainId),
      role: MEMBER_ROLES[m.role] ?? "PARTICIPANT",
      status: MEMBER_STATUSES[m.status] ?? "ACTIVE",
      owner: m.owner === zeroAddress ? m.owner : getAddress(m.owner),
      created_at: new Date(Number(m.createdAt) * 1000).toISOString(),
      updated_at: new Date(Number(m.updatedAt) * 1000).toISOString(),
      tx_hash: hashes.get(Number(m.id)) ?? null,
    }));
  }
}

function memberNameTaken(name: string): ChaingateError {
  return new ChaingateError(`a member named "${name}" is registered already`, {
    code: "MEMBER_NAME_TAKEN",
  });
}
