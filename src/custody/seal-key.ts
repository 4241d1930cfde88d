/** The operator's server key: seals unattended wallets' private keys with AES-256-GCM. */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

interface Sealed {
  iv: string;
  data: string;
  tag: string;
}

/**
 * Two keys are derived from the operator's secret, so the secret itself never encrypts anything and
 * the fingerprint stored with each record reveals nothing about the sealing key.
 */
export class SealKey {
  /** Fingerprint stored beside each sealed key: tells which server key sealed it. */
  readonly id: string;
  private readonly key: Buffer;

  constructor(secretHex: string) {
    const secret = Buffer.from(secretHex, "hex");
    if (secret.length !== 32) throw new Error("the server key must be 32 bytes");
    this.key = Buffer.from(hkdfSync("sha256", secret, "chaingate", "unattended wallet seal v1", 32));
    this.id = Buffer.from(hkdfSync("sha256", secret, "chaingate", "unattended wallet key id v1", 8)).toString(
      "hex",
    );
    secret.fill(0);
  }

  /** `context` (wallet, index, address) is authenticated: a sealed key moved to another row does not open. */
  seal(secret: Uint8Array, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const data = Buffer.concat([cipher.update(secret), cipher.final()]);
    const sealed: Sealed = {
      iv: iv.toString("hex"),
      data: data.toString("hex"),
      tag: cipher.getAuthTag().toString("hex"),
    };
    return JSON.stringify(sealed);
  }

  /** Throws when the record was changed, moved, or sealed under another key. */
  open(text: string, context: string): Buffer {
    const sealed = JSON.parse(text) as Sealed;
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(sealed.iv, "hex"));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(sealed.tag, "hex"));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, "hex")), decipher.final()]);
  }
}
