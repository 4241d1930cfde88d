/** Pure policy decisions: does a signing request pass every rule of every policy that applies? */
import type { CallFacts } from "./decode-call.js";
import type { Policy } from "./policy-rules.js";
import { erc20Outflows, type Simulation } from "./simulate-transaction.js";

export interface TransactionFacts {
  chainId: number;
  /** Lowercase; null deploys. */
  to: string | null;
  value: bigint;
  gas: bigint;
  /** maxFeePerGas, or gasPrice for legacy fees. */
  feePerGas: bigint;
  call: CallFacts;
  /** `to` is chaingate's own endpoint on this chain (its transports are judged by their beneficiary). */
  toEndpoint: boolean;
}

export interface MessageFacts {
  kind: "message" | "typed_data" | "authorization";
  /** The EIP-712 domain of typed data. */
  domain?: { name?: unknown; chainId?: unknown; verifyingContract?: unknown };
  /** What a permit in typed data lets another address take (EIP-2612, DAI, EIP-4494, Permit2): judged under the outflow cap. */
  grants?: readonly { token: string; amount: bigint }[];
  /** An EIP-7702 authorization: the delegate contract (lower case) and the chain it is for (0: every chain). */
  delegation?: { delegate: string; chainId: number; nonce?: number };
}

export interface Denial {
  policyId: string;
  policyName: string;
  /** The rule's name as written in the policy (`recipients`, `max_value_per_day`, `tokens.max_per_tx`, ...). */
  rule: string;
  reason: string;
  /** What the refusal is based on, answered with it (a simulation's logs). */
  details?: Record<string, unknown>;
}

/** A rolling 24 h limit the request must fit in, checked against the store under the nonce lock. */
export interface DailyLimit {
  policyId: string;
  policyName: string;
  rule: "max_value_per_day" | "tokens.max_per_day";
  /** "native" or the token (lowercase). */
  asset: string;
  amount: bigint;
  limit: bigint;
  /**
   * What the limit counts: everything the policy binds. A wallet's policy counts every address of
   * the wallet on every chain; a key's policy everything the key signs.
   */
  scope: SpendScope;
}

export type SpendScope = { kind: "wallet"; id: string } | { kind: "key"; id: string };

/** The spends a policy's rolling limits count (see DailyLimit.scope). */
export function scopeOf(policy: Policy): SpendScope {
  if (policy.wallet_id !== null) return { kind: "wallet", id: policy.wallet_id };
  return { kind: "key", id: policy.api_key_id ?? "" };
}

const lower = (list: readonly string[] | undefined) => list?.map((a) => a.toLowerCase());

function deny(policy: Policy, rule: string, reason: string): Denial {
  return { policyId: policy.id, policyName: policy.name, rule, reason };
}

/** The first rule, of the first policy, that refuses the transaction; undefined when all allow it. */
export function checkTransaction(policies: readonly Policy[], tx: TransactionFacts): Denial | undefined {
  for (const policy of policies) {
    const denial = checkOne(policy, tx);
    if (denial) return denial;
  }
  return undefined;
}

function checkOne(policy: Policy, tx: TransactionFacts): Denial | undefined {
  const r = policy.rules;
  if (r.chains && !r.chains.includes(tx.chainId))
    return deny(policy, "chains", `chain ${tx.chainId} is not allowed`);
  if (r.max_gas !== undefined && tx.gas > BigInt(r.max_gas))
    return deny(policy, "max_gas", `gas limit ${tx.gas} is above ${r.max_gas}`);
  if (r.max_fee_per_gas !== undefined && tx.feePerGas > BigInt(r.max_fee_per_gas))
    return deny(policy, "max_fee_per_gas", `fee per gas ${tx.feePerGas} wei is above ${r.max_fee_per_gas}`);
  const destination = checkDestination(policy, tx);
  if (destination) return destination;
  if (r.max_value_per_tx !== undefined && tx.value > BigInt(r.max_value_per_tx))
    return deny(policy, "max_value_per_tx", `value ${tx.value} wei is above ${r.max_value_per_tx}`);
  const token = tx.call.token;
  const limit = token && r.tokens?.find((t) => t.token.toLowerCase() === token.token);
  if (token && limit && limit.max_per_tx !== undefined && token.amount > BigInt(limit.max_per_tx))
    return deny(
      policy,
      "tokens.max_per_tx",
      `${token.amount} of ${token.token} is above ${limit.max_per_tx}`,
    );
  return undefined;
}

function checkDestination(policy: Policy, tx: TransactionFacts): Denial | undefined {
  const r = policy.rules;
  const recipients = lower(r.recipients);
  const restricted = recipients !== undefined || r.contracts !== undefined;
  if (tx.to === null) {
    if (r.allow_deploy === false || (restricted && r.allow_deploy !== true))
      return deny(policy, "allow_deploy", "deploying contracts is not allowed");
    return undefined;
  }
  const beneficiary = tx.call.beneficiary;
  if (recipients && beneficiary !== null && !recipients.includes(beneficiary))
    return deny(policy, "recipients", `${beneficiary} is not an allowed recipient`);
  // chaingate's endpoint is judged by whom its transport reaches (checked just above).
  if (tx.toEndpoint && tx.call.beneficiary !== null) return undefined;
  const contract = r.contracts?.find((c) => c.address.toLowerCase() === tx.to);
  if (tx.call.selector === null) {
    if (restricted && !recipients?.includes(tx.to) && !contract)
      return deny(policy, "recipients", `${tx.to} is not an allowed recipient`);
    return undefined;
  }
  if (contract) {
    const selectors = lower(contract.selectors);
    if (selectors && !selectors.includes(tx.call.selector))
      return deny(policy, "contracts.selectors", `function ${tx.call.selector} of ${tx.to} is not allowed`);
    return undefined;
  }
  if (r.contracts !== undefined) return deny(policy, "contracts", `calls to ${tx.to} are not allowed`);
  if (recipients && !recipients.includes(tx.to))
    return deny(policy, "recipients", `${tx.to} is not an allowed recipient`);
  return undefined;
}

/** The rolling limits of every applying policy that this transaction counts against. */
export function dailyLimits(policies: readonly Policy[], tx: TransactionFacts): DailyLimit[] {
  const limits: DailyLimit[] = [];
  for (const policy of policies) {
    const r = policy.rules;
    if (r.max_value_per_day !== undefined && tx.value > 0n) {
      limits.push({
        policyId: policy.id,
        policyName: policy.name,
        rule: "max_value_per_day",
        asset: "native",
        amount: tx.value,
        limit: BigInt(r.max_value_per_day),
        scope: scopeOf(policy),
      });
    }
    const token = tx.call.token;
    const entry = token && r.tokens?.find((t) => t.token.toLowerCase() === token.token);
    if (token && entry && entry.max_per_day !== undefined) {
      limits.push({
        policyId: policy.id,
        policyName: policy.name,
        rule: "tokens.max_per_day",
        asset: token.token,
        amount: token.amount,
        limit: BigInt(entry.max_per_day),
        scope: scopeOf(policy),
      });
    }
  }
  return limits;
}

/** Message signing: refused where a policy turns it off, typed data outside its domain list. */
export function checkMessage(policies: readonly Policy[], message: MessageFacts): Denial | undefined {
  if (message.kind === "authorization") return checkDelegation(policies, message.delegation!);
  for (const policy of policies) {
    const r = policy.rules;
    if (r.message_signing === false) return deny(policy, "message_signing", "message signing is not allowed");
    const overCap = outflowOverCap(policy, new Map((message.grants ?? []).map((g) => [g.token, g.amount])));
    if (overCap) return overCap;
    if (message.kind !== "typed_data" || r.typed_data_domains === undefined) continue;
    const domain = message.domain ?? {};
    const listed = r.typed_data_domains.some(
      (d) =>
        (d.name === undefined || d.name === domain.name) &&
        (d.chainId === undefined || BigInt(d.chainId) === toBigInt(domain.chainId)) &&
        (d.verifyingContract === undefined ||
          (typeof domain.verifyingContract === "string" &&
            d.verifyingContract.toLowerCase() === domain.verifyingContract.toLowerCase())),
    );
    if (!listed) return deny(policy, "typed_data_domains", "the typed data's domain is not on the list");
  }
  return undefined;
}

/** An EIP-7702 delegation: the delegate must be listed, for the chain it names (every chain, 0, only when listed). */
function checkDelegation(
  policies: readonly Policy[],
  delegation: NonNullable<MessageFacts["delegation"]>,
): Denial | undefined {
  for (const policy of policies) {
    const listed = policy.rules.delegates;
    if (listed === undefined) continue;
    const entry = listed.find((d) => d.address.toLowerCase() === delegation.delegate);
    if (!entry) return deny(policy, "delegates", `delegate ${delegation.delegate} is not on the list`);
    const chains = entry.chain_ids;
    const allowed = chains === undefined ? delegation.chainId !== 0 : chains.includes(delegation.chainId);
    if (!allowed)
      return deny(
        policy,
        "delegates",
        delegation.chainId === 0
          ? `a delegation valid on every chain (chain id 0) to ${delegation.delegate} is not allowed`
          : `delegate ${delegation.delegate} is not allowed on chain ${delegation.chainId}`,
      );
  }
  return undefined;
}

function toBigInt(value: unknown): bigint | undefined {
  try {
    return typeof value === "number" || typeof value === "string" || typeof value === "bigint"
      ? BigInt(value)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The first token whose outflow (moved or granted) is over the policy's `simulation.max_token_outflow`. */
function outflowOverCap(policy: Policy, outflows: ReadonlyMap<string, bigint>): Denial | undefined {
  const limits = policy.rules.simulation?.max_token_outflow ?? [];
  const anyToken = limits.find((l) => l.token === undefined);
  for (const [token, amount] of outflows) {
    const limit = limits.find((l) => l.token?.toLowerCase() === token) ?? anyToken;
    if (limit !== undefined && amount > BigInt(limit.max))
      return {
        ...deny(
          policy,
          "simulation.max_token_outflow",
          `${amount} units of ${token} would leave the address or be granted to another, over the limit of ${limit.max}`,
        ),
        details: { token, outflow: amount.toString() },
      };
  }
  return undefined;
}

/** Whether any policy asks for a simulation before signing. */
export function wantsSimulation(policies: readonly Policy[]): boolean {
  return policies.some((p) => p.rules.simulation !== undefined);
}

/** The `simulation` rule against a simulated run: reverts, and ERC20 outflows over a limit. */
export function checkSimulation(
  policies: readonly Policy[],
  simulation: Simulation,
  address: string,
  decoded: CallFacts,
): Denial | undefined {
  const details = {
    simulated_with: simulation.via,
    simulated_logs: simulation.logs,
    ...(simulation.revertData === undefined ? {} : { revert_data: simulation.revertData }),
  };
  const outflows = erc20Outflows(simulation, address, decoded.token);
  for (const policy of policies) {
    const rule = policy.rules.simulation;
    if (rule === undefined) continue;
    if (simulation.reverted && rule.refuse_reverts !== false)
      return {
        ...deny(policy, "simulation.refuse_reverts", "the transaction reverts in simulation"),
        details,
      };
    // Without logs only the call's own calldata is seen: a call through any contract would count as
    // no outflow, so a cap fails closed unless the operator chose calldata-only judging.
    if (simulation.logs === null && (rule.max_token_outflow ?? []).length > 0 && rule.calldata_only !== true)
      return {
        ...deny(
          policy,
          "simulation.max_token_outflow",
          "the node cannot simulate with logs (no eth_simulateV1), so the outflow cap cannot be judged; refused (set simulation.calldata_only to judge by the call's own calldata)",
        ),
        details,
      };
    const over = outflowOverCap(policy, outflows);
    if (over) return { ...over, details: { ...details, ...over.details } };
  }
  return undefined;
}
