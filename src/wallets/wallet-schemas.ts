/** TypeBox schemas of the Wallets group: request bodies, params and the wallet record. */
import { Type } from "@sinclair/typebox";

export const WalletRecordSchema = Type.Object(
  {
    id: Type.String({ description: "wallet id (the same for all addresses of one wallet)" }),
    type: Type.Union([Type.Literal("KEYSTORE_V3"), Type.Literal("PKCS11")]),
    address: Type.String({ description: "EIP-55 checksummed address" }),
    public_key: Type.String({ description: "uncompressed secp256k1 public key, 0x04..." }),
    index: Type.Integer({ format: "int32", description: "address index i of m/44'/60'/0'/0/i" }),
    data: Type.String({
      description:
        "KEYSTORE_V3: standalone keystore v3 JSON of this address's key (scrypt, aes-128-ctr); PKCS11: where the key is on the token, {pkcs11, token, key_id, label} (never a secret)",
    }),
  },
  { title: "Wallet record" },
);

export function createWalletBodySchema(maxAddresses: number) {
  return Type.Object(
    {
      type: Type.Union([Type.Literal("KEYSTORE_V3"), Type.Literal("PKCS11")], {
        description:
          "KEYSTORE_V3: keys in keystore v3 records opened by a password; PKCS11: keys made (or adopted) on the configured PKCS#11 token, which never leave it",
      }),
      password: Type.Optional(
        Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
          description: "encrypts every keystore of the wallet; required (not empty) for KEYSTORE_V3",
        }),
      ),
      address_quantity: Type.Integer({
        format: "int32",
        minimum: 1,
        maximum: maxAddresses,
        description: `number of addresses to derive (1..${maxAddresses})`,
      }),
      mnemonic: Type.Optional(
        Type.String({
          maxLength: 1024,
          description: "import: an existing BIP-39 English phrase instead of a new seed",
        }),
      ),
      keys: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
          minItems: 1,
          maxItems: maxAddresses,
          description: "PKCS11: adopt these keys already on the token (label or id in hex), one address each",
        }),
      ),
      keystore: Type.Optional(
        Type.Union([Type.String({ maxLength: 65536 }), Type.Object({}, { additionalProperties: true })], {
          description:
            "import: one keystore v3 document, decrypted with `password`; address_quantity must be 1",
        }),
      ),
    },
    { additionalProperties: false, title: "Create wallet" },
  );
}

export const WalletParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export const WalletQuerySchema = Type.Object(
  { index: Type.Optional(Type.Integer({ format: "int32", minimum: 0, maximum: 2 ** 31 - 1 })) },
  { additionalProperties: false },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: "stable error code" }),
    retryable: Type.Boolean(),
    errors: Type.Optional(Type.Unknown()),
  },
  { title: "Problem" },
);
