/** Rows of the signer methods answered from custody wallets (EIP-1193 signing, EIP-7702, EIP-5792). */
import { Type } from "@sinclair/typebox";
import { opt, type Row, req } from "./method-spec.js";
import { Address, CallObject, Data, Quantity, SyncTimeout, TransactionObject } from "./param-schemas.js";

const SendCallsRequest = Type.Object(
  {
    version: Type.Optional(Type.String({ maxLength: 20 })),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from: Address,
    chainId: Quantity,
    atomicRequired: Type.Optional(Type.Boolean()),
    calls: Type.Array(
      Type.Object(
        {
          to: Type.Optional(Address),
          data: Type.Optional(Data),
          value: Type.Optional(Quantity),
          capabilities: Type.Optional(Type.Object({}, { additionalProperties: true })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 64 },
    ),
    capabilities: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object({ optional: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
      ),
    ),
  },
  {
    title: "calls request",
    description:
      "{version, id?, from, chainId, atomicRequired, calls: [{to, data, value}], capabilities?} (EIP-5792)",
    additionalProperties: false,
  },
);

/** The signer methods JSON-RPC clients call on their provider, answered from custody wallets. */
export const SIGNER_METHODS: Row[] = [
  [
    "personal_sign",
    "Signs the EIP-191 personal message of the given bytes (or UTF-8 text) with a custody address.",
    [
      req("message", Type.String({ title: "message", description: "hex bytes, or text" })),
      req("address", Address),
      opt(
        "password",
        Type.String({
          title: "password",
          description: "the wallet's password, for this signature only (geth's optional third parameter)",
        }),
      ),
    ],
    "custody",
    "none",
    ["small"],
  ],
  [
    "eth_signTypedData_v4",
    "Signs EIP-712 typed data (a JSON string or object) with a custody address.",
    [
      req("address", Address),
      req(
        "typedData",
        Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })], {
          title: "typed data",
          description: "EIP-712 document {types, primaryType, domain, message}, as JSON text or an object",
        }),
      ),
    ],
    "custody",
    "none",
    ["small"],
  ],
  [
    "eth_signTransaction",
    "Signs a transaction with a custody address without sending it; returns the raw bytes.",
    [req("transaction", TransactionObject)],
    "custody",
    "none",
  ],
  [
    "eth_signAuthorization",
    "Signs an EIP-7702 authorization with a custody address (the `delegates` policy rule applies; audited); answers it in authorizationList form.",
    [
      req("address", Address),
      req(
        "authorization",
        Type.Object(
          {
            address: Type.Optional(Address),
            contractAddress: Type.Optional(Address),
            chainId: Type.Optional(Type.Union([Quantity, Type.Integer({ minimum: 0 })])),
            nonce: Type.Optional(Type.Union([Quantity, Type.Integer({ minimum: 0 })])),
          },
          {
            title: "authorization request",
            description:
              "address (or contractAddress): the delegate contract; chainId: default this chain, 0 every chain; nonce: default the address's next (queued transactions included)",
            additionalProperties: false,
          },
        ),
      ),
    ],
    "custody",
    "none",
  ],
  [
    "eth_fillTransaction",
    "Fills a transaction as chaingate would sign it (nonce from the ledger, fees, gas with its margin, the policy decision); answers {raw (unsigned), tx, policy}. Other addresses go to the node.",
    [req("transaction", CallObject)],
    "custody",
    "none",
    ["unsigned"],
  ],
  [
    "eth_sendTransactionSync",
    "Signs with the caller's custody address `from`, sends through the transaction pipeline, and answers the receipt once mined (eth_sendRawTransactionSync's wait and errors).",
    [req("transaction", TransactionObject), opt("timeout", SyncTimeout)],
    "custody",
    "none",
    ["send"],
  ],
  [
    "wallet_getCapabilities",
    "EIP-5792: what wallet_sendCalls offers a custody address on each served chain (calls in order; not atomic).",
    [req("address", Address), opt("chainIds", Type.Array(Quantity, { title: "chain ids", maxItems: 100 }))],
    "custody",
    "none",
    ["unsigned"],
  ],
  [
    "wallet_sendCalls",
    "EIP-5792: sends calls from a custody address in order, under consecutive nonces, each through the pipeline and its policies; answers the bundle id.",
    [req("request", SendCallsRequest)],
    "custody",
    "none",
  ],
  [
    "wallet_getCallsStatus",
    "EIP-5792: a bundle's status (100 pending, 200 confirmed, 400 not sent, 500 reverted, 600 partly) and its receipts.",
    [req("id", Type.String({ title: "bundle id", minLength: 1, maxLength: 200 }))],
    "custody",
    "none",
    ["unsigned"],
  ],
  [
    "personal_unlockAccount",
    "Unlocks a custody address for signing for `duration` seconds (default and ceiling set by the operator).",
    [
      req("address", Address),
      req("password", Type.String({ title: "password", description: "the wallet's password" })),
      opt(
        "duration",
        Type.Union([Quantity, Type.Integer({ minimum: 0 })], {
          title: "duration",
          description: "seconds; 0 or absent: the default",
        }),
      ),
    ],
    "custody",
    "none",
    ["small"],
  ],
  [
    "personal_lockAccount",
    "Ends the unlock of a custody address.",
    [req("address", Address)],
    "custody",
    "none",
    ["small", "unsigned"],
  ],
];
