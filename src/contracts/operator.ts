/** The operator account: signs registry writes and relays transports. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { getAddress, type Hex, type LocalAccount } from "viem";
import { generatePrivateKey } from "viem/accounts";
import type { Config } from "../config/config.js";
import { checkedAccount, signatureGuard } from "../keys/checked-signer.js";
import type { Pkcs11Token } from "../keys/pkcs11-token.js";
import { signingAccount } from "../keys/signing-account.js";

/**
 * The devnet's operator key: made at random on the first start and kept in the data dir (0600).
 * A key anyone could compute would let any caller sign registry writes as the operator.
 */
function devnetOperatorKey(dataDir: string): Hex {
  const file = join(dataDir, "devnet", "operator.key");
  if (existsSync(file)) {
    const stored = readFileSync(file, "utf8").trim();
    if (/^0x[0-9a-fA-F]{64}$/.test(stored)) return stored as Hex;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const key = generatePrivateKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

export async function operatorAccount(
  config: Config,
  onDevnet: boolean,
  hsm?: Pkcs11Token,
): Promise<LocalAccount | undefined> {
  if (config.operatorKeyPkcs11 !== undefined && hsm !== undefined) {
    // On the token: found by label or id, and signing there, every signature verified.
    const key = await hsm.find(config.operatorKeyPkcs11);
    return checkedAccount(
      getAddress(key.address),
      key.publicKey,
      (hash) => hsm.sign(key.id, hash),
      signatureGuard,
      "pkcs11",
    );
  }
  if (config.operatorKey !== undefined) return signingAccount(config.operatorKey);
  return onDevnet ? signingAccount(devnetOperatorKey(config.dataDir)) : undefined;
}
