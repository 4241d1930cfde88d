/** A policy's rules: the one schema that validates them, documents them and types them. */
import { type Static, Type } from "@sinclair/typebox";

const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "20-byte hex address" });
/** Wei or token units as a decimal string (JSON numbers lose precision past 2^53). */
const Amount = Type.String({ pattern: "^[0-9]{1,78}$", description: "decimal integer string" });
const Selector = Type.String({ pattern: "^0x[0-9a-fA-F]{8}$", description: "4-byte function selector" });

export const PolicyRulesSchema = Type.Object(
  {
    chains: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100, description: "chains it may sign for" }),
    ),
    recipients: Type.Optional(
      Type.Array(Address, {
        maxItems: 1000,
        description:
          "addresses a transaction may go to, and a token transfer, approval or transport may name as beneficiary",
      }),
    ),
    contracts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            address: Address,
            selectors: Type.Optional(Type.Array(Selector, { maxItems: 100 })),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 1000,
          description: "contracts that may be called (with data), each optionally limited to some functions",
        },
      ),
    ),
    allow_deploy: Type.Optional(
      Type.Boolean({ description: "with recipients or contracts set, deployments are refused unless true" }),
    ),
    max_value_per_tx: Type.Optional(Amount),
    max_value_per_day: Type.Optional(Amount),
    tokens: Type.Optional(
      Type.Array(
        Type.Object(
          { token: Address, max_per_tx: Type.Optional(Amount), max_per_day: Type.Optional(Amount) },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: "ERC20 amount limits per token" },
      ),
    ),
    simulation: Type.Optional(
      Type.Object(
        {
          refuse_reverts: Type.Optional(
            Type.Boolean({ description: "refuse a transaction that reverts in simulation (default true)" }),
          ),
          max_token_outflow: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  token: Type.Optional(Address),
                  max: Amount,
                },
                { additionalProperties: false },
              ),
              {
                maxItems: 100,
                description:
                  "most token units one transaction may move out of the address or grant to another (ERC20 transfers, approvals and permits by their amount; ERC721 transfers and approvals one each, operator grants as everything), by the simulated logs; an entry without `token` limits every token not listed",
              },
            ),
          ),
          calldata_only: Type.Optional(
            Type.Boolean({
              description:
                "where the node cannot simulate with logs (no eth_simulateV1), judge the outflow cap by the call's own calldata instead of refusing (default false: refused)",
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            "every transaction is simulated before it is signed (eth_simulateV1; eth_call where the node lacks it, which sees reverts and the call's own transfer only)",
        },
      ),
    ),
    max_fee_per_gas: Type.Optional(Amount),
    max_gas: Type.Optional(Amount),
    message_signing: Type.Optional(
      Type.Boolean({ description: "false: eth_sign, personal_sign and typed data are refused" }),
    ),
    delegates: Type.Optional(
      Type.Array(
        Type.Object(
          {
            address: Address,
            chain_ids: Type.Optional(
              Type.Array(Type.Integer({ minimum: 0 }), {
                maxItems: 100,
                description: "chains the delegation may be for; 0 (every chain) only when listed",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 100,
          description:
            "EIP-7702: the delegate contracts an address may authorize (eth_signAuthorization, type-4 transactions); unset: any",
        },
      ),
    ),
    typed_data_domains: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.Optional(Type.String({ maxLength: 200 })),
            chainId: Type.Optional(Type.Integer({ minimum: 1 })),
            verifyingContract: Type.Optional(Address),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: "EIP-712 domains that may be signed; each field given must match" },
      ),
    ),
  },
  { additionalProperties: false },
);

export type PolicyRules = Static<typeof PolicyRulesSchema>;

export interface Policy {
  id: string;
  name: string;
  wallet_id: string | null;
  api_key_id: string | null;
  rules: PolicyRules;
  created_by: string | null;
  created_at: string;
}
