/** The error catalogue's entries for transactions, policies, tokens and transports, and start-up (the rest are in codes.ts). */
import {
  BAD,
  type ErrorCodeEntry,
  LIMIT,
  REJECTED,
  RPC_ATOMICITY_NOT_SUPPORTED,
  RPC_BUNDLE_TOO_LARGE,
  RPC_DUPLICATE_BUNDLE_ID,
  RPC_INTERNAL_ERROR,
  RPC_INVALID_PARAMS,
  RPC_POLICY_DENIED,
  RPC_SYNC_NOT_READY,
  RPC_SYNC_TIMEOUT,
  RPC_TX_REJECTED,
  RPC_UNAVAILABLE,
  RPC_UNKNOWN_BUNDLE_ID,
  RPC_UNSUPPORTED_CAPABILITY,
  RPC_UNSUPPORTED_CHAIN_ID,
  START,
} from "./rpc-codes.js";

export const SIGNING_CODES = {
  // Transactions
  INVALID_TRANSACTION: {
    ...BAD,
    meaning: "a transaction without `to` and without `data` (a deployment needs its code)",
  },
  INVALID_ADDRESS: { ...BAD, meaning: "not a 20-byte 0x address" },
  INVALID_HEX: { ...BAD, meaning: "not 0x-prefixed hex bytes" },
  INVALID_VALUE: { ...BAD, meaning: "not a non-negative integer of wei below 2^256" },
  INVALID_AMOUNT: { ...BAD, meaning: "an amount is not a positive integer below 2^256" },
  INSUFFICIENT_FUNDS: { ...REJECTED, meaning: "the address cannot pay value plus fees" },
  EXECUTION_REVERTED: { ...REJECTED, meaning: "the call reverts; `revert_reason` / `revert_data` say why" },
  ESTIMATION_FAILED: { ...REJECTED, meaning: "the node could not estimate gas for another reason" },
  TRANSACTION_REJECTED: { ...REJECTED, meaning: "the node refused the signed transaction" },
  NONCE_TOO_LOW: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning: "a client's own nonce is below the ledger's next",
  },
  NONCE_TOO_HIGH: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning: "a client's own nonce is above the ledger's next (it would wait behind a gap)",
  },
  INVALID_IDEMPOTENCY_KEY: { ...BAD, meaning: "`Idempotency-Key` is not 1 to 200 visible ASCII characters" },
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    rpc: RPC_INVALID_PARAMS,
    meaning: "the `Idempotency-Key` was used with another body",
  },
  IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    rpc: RPC_INTERNAL_ERROR,
    retry: true,
    meaning: "a request with this `Idempotency-Key` is still running",
  },
  OPERATION_INTERRUPTED: {
    status: 409,
    rpc: RPC_UNAVAILABLE,
    meaning: "the request with this key was cut off after signing; `data.tx_hashes` are tracked",
  },
  NOT_MINED_YET: {
    status: 504,
    rpc: RPC_UNAVAILABLE,
    retry: true,
    meaning:
      "an operation waited for its own transaction and it was not mined in time; `data.tx_hash` is tracked",
  },

  HANDED_OUT_LIMIT: {
    ...LIMIT,
    meaning:
      "eth_signTransaction: the address already has 64 signed, unsent payloads at or past its next nonce; send them (or let them lapse) first",
  },
  NONCE_ALREADY_SIGNED: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning:
      "another payload was already signed at this nonce of the address (`data.nonce`, `data.tx_hash`); chaingate signs one per nonce",
  },
  SIGNATURE_MISMATCH: {
    status: 500,
    rpc: RPC_TX_REJECTED,
    meaning:
      "the key backend answered a signature that does not recover to the signing address: refused, audited, and the address signs nothing more until its backend passes a self-test",
  },
  HSM_UNAVAILABLE: {
    status: 503,
    rpc: RPC_UNAVAILABLE,
    retry: true,
    meaning:
      "the PKCS#11 token did not answer (absent, session closed, module hung past `--pkcs11-timeout-ms`); nothing was signed or reserved; chaingate reconnects by itself",
  },
  HSM_LOGIN_FAILED: {
    status: 503,
    rpc: RPC_UNAVAILABLE,
    meaning: "the PKCS#11 token refused the PIN from `--pkcs11-pin-file` (or is locked): fix the PIN file",
  },
  HSM_KEY_NOT_FOUND: {
    status: 404,
    rpc: RPC_TX_REJECTED,
    meaning: "no secp256k1 key with that label or id on the PKCS#11 token",
  },
  HSM_NOT_CONFIGURED: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning: "PKCS11 wallets need `--pkcs11-module`, `--pkcs11-token` and `--pkcs11-pin-file`",
  },
  CHAIN_LACKS_FEATURE: {
    status: 422,
    rpc: RPC_TX_REJECTED,
    meaning:
      "the chain's nodes cannot take this kind of transaction (a type-4 EIP-7702 transaction or authorization before Prague); nothing was signed or reserved",
  },
  UNSUPPORTED_CAPABILITY: {
    status: 400,
    rpc: RPC_UNSUPPORTED_CAPABILITY,
    meaning: "wallet_sendCalls asked for a capability chaingate lacks without marking it optional (EIP-5792)",
  },
  UNSUPPORTED_CHAIN_ID: {
    status: 400,
    rpc: RPC_UNSUPPORTED_CHAIN_ID,
    meaning: "wallet_sendCalls names a chain chaingate does not serve",
  },
  DUPLICATE_BUNDLE_ID: {
    status: 409,
    rpc: RPC_DUPLICATE_BUNDLE_ID,
    meaning: "a bundle with this id was already sent by this key",
  },
  UNKNOWN_BUNDLE_ID: {
    status: 404,
    rpc: RPC_UNKNOWN_BUNDLE_ID,
    meaning: "wallet_getCallsStatus: no bundle with this id for this key",
  },
  BUNDLE_TOO_LARGE: {
    status: 413,
    rpc: RPC_BUNDLE_TOO_LARGE,
    meaning: "wallet_sendCalls: more than 16 calls",
  },
  ATOMICITY_NOT_SUPPORTED: {
    status: 400,
    rpc: RPC_ATOMICITY_NOT_SUPPORTED,
    meaning:
      "wallet_sendCalls with atomicRequired: chaingate sends the calls one by one, under consecutive nonces",
  },
  RECEIPT_TIMEOUT: {
    status: 504,
    rpc: RPC_SYNC_TIMEOUT,
    retry: true,
    meaning:
      "a synchronous send (EIP-7966) was sent but not mined within its timeout; `data.tx_hash` is in the pool (and tracked, for custody sends)",
  },
  TRANSACTION_NOT_READY: {
    status: 422,
    rpc: RPC_SYNC_NOT_READY,
    meaning:
      "a synchronous send (EIP-7966) was taken by the node but cannot be mined yet: its nonce is past the account's next (`data.expected_nonce`)",
  },

  // Policies, audit and webhooks
  POLICY_DENIED: {
    status: 403,
    rpc: RPC_POLICY_DENIED,
    meaning:
      "a signing policy refused the request; `data.rule` and `data.policy_id` name the rule; nothing was signed",
  },
  POLICY_NOT_FOUND: { status: 404, meaning: "no policy with that id" },
  INVALID_POLICY: { ...BAD, meaning: "a policy binds nothing, or a rule's value is not what it must be" },
  WEBHOOK_NOT_FOUND: { status: 404, meaning: "no webhook (or delivery) with that id for this key" },
  WEBHOOK_URL_REFUSED: {
    ...BAD,
    meaning:
      "a webhook URL is not http(s), or names a private or loopback address the operator did not allow",
  },
  WEBHOOK_LIMIT: { ...LIMIT, meaning: "the key has `--max-webhooks-per-key` webhooks already" },

  // Members, tokens, contracts and transports (reverts of chaingate's contracts answer 422 / -32010)
  MEMBER_NAME_TAKEN: {
    status: 409,
    rpc: RPC_INVALID_PARAMS,
    meaning: "a member with that name is registered already",
  },
  DESTINATION_NOT_MEMBER: {
    status: 422,
    rpc: RPC_INVALID_PARAMS,
    meaning: "no ACTIVE member is registered on the destination chain",
  },
  SAME_CHAIN: { ...BAD, meaning: "a transport's destination is its source chain" },
  RECEIVER_NOT_CONTRACT: {
    status: 422,
    rpc: RPC_INVALID_PARAMS,
    meaning:
      "a transport with data or a message names a receiver with no code on the destination chain; `data.field` names it",
  },
  TOKEN_NOT_FOUND: { ...BAD, meaning: "no contract at the token address on that chain" },
  TOKEN_NOT_TRANSPORTABLE: { ...REJECTED, meaning: "the token was not created by chaingate's endpoint" },
  TOKEN_ID_NOT_FOUND: { ...REJECTED, meaning: "the ERC721 token id does not exist" },
  TOKEN_ID_TAKEN: { ...REJECTED, meaning: "an ERC721 token with that id exists already" },
  NOT_TOKEN_OWNER: { ...REJECTED, meaning: "the sender does not own (and is not approved for) the token id" },
  INSUFFICIENT_TOKEN_BALANCE: { ...REJECTED, meaning: "the amount is more than the sender's token balance" },
  INVALID_CONSTRUCTOR_ARGS: { ...BAD, meaning: "`constructor_args` do not fit the contract's constructor" },
  LANE_LIMIT_NOT_FOUND: { status: 404, meaning: "no limit is set on that lane (source, destination, token)" },
  INVALID_LANE_LIMIT: {
    ...BAD,
    meaning: "a lane limit joins a chain to itself, or names a chain not configured",
  },

  // Start-up and the CLI
  CHAIN_ID_MISMATCH: {
    ...START,
    meaning:
      "an upstream serves another chain than its chain's others (it is quarantined), or two chains are one",
  },
  INSECURE_LISTEN: { ...START, meaning: "a non-loopback `--host` with no API key and no `--insecure`" },
  MIGRATION_FAILED: {
    ...START,
    meaning: "the store could not be migrated (the message names the migration)",
  },
  DEPLOYMENT_FAILED: { ...START, meaning: "a system contract could not be deployed" },
  DEVNET_UNSUPPORTED: {
    ...START,
    meaning: "no anvil binary for this platform: configure `CHAINGATE_UPSTREAMS`",
  },
  DEVNET_START_FAILED: { ...START, meaning: "an embedded anvil did not start (the message says why)" },
  ABORTED: { ...START, meaning: "start-up was interrupted (SIGINT/SIGTERM while waiting for an upstream)" },
} as const satisfies Record<string, ErrorCodeEntry>;
