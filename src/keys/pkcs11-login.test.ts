/** The PKCS#11 login on its own process (a login is the process's): a wrong PIN, then the PIN file fixed in place. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { getAddress, recoverMessageAddress } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { SOFTHSM_AVAILABLE, type SoftHsmToken, softHsmToken } from "../test-support/softhsm.js";
import { checkedAccount, SignatureGuard, SignatureMismatch } from "./checked-signer.js";
import { Pkcs11Token } from "./pkcs11-token.js";

describe.skipIf(!SOFTHSM_AVAILABLE)("PKCS#11 login", () => {
  let token: SoftHsmToken;
  afterAll(() => token?.remove());

  it("a refused PIN is HSM_LOGIN_FAILED, not tried again until the file changes; fixed in place, the token opens", async () => {
    token = softHsmToken("login");
    const pinFile = join(token.dir, "wrong");
    writeFileSync(pinFile, "000000\n");
    const hsm = new Pkcs11Token({
      module: token.module,
      token: token.label,
      pinFile,
      timeoutMs: 5_000,
      sessions: 2,
    });
    await expect(hsm.open()).rejects.toMatchObject({ code: "HSM_LOGIN_FAILED", retryable: false });
    expect(hsm.problem).toMatch(/refused the PIN/);
    // The same file again: the token is not asked (HSMs lock a PIN after a few failures).
    const again = await hsm.open().catch((error: unknown) => error);
    expect(again).toMatchObject({ code: "HSM_LOGIN_FAILED" });
    // Fixed in place, as a secret store rotates it (a later write time).
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(pinFile, `${token.pin}\n`);
    await hsm.open();
    expect(hsm.problem).toBeUndefined();
    const key = await hsm.generate("after-login");
    expect((await hsm.sign(key.id, new Uint8Array(32).fill(9))).r).toHaveLength(32);
    // A token that is not there: HSM_UNAVAILABLE, retryable.
    const absent = new Pkcs11Token({
      module: token.module,
      token: "no-such-token",
      pinFile,
      timeoutMs: 5_000,
      sessions: 1,
    });
    await expect(absent.open()).rejects.toMatchObject({ code: "HSM_UNAVAILABLE", retryable: true });
    // Behind a module wrapper that corrupts one signature in four: none released that does not
    // recover to the address; each bad one refused and told.
    let calls = 0;
    const told: string[] = [];
    const guard = new SignatureGuard();
    guard.listen((address) => told.push(address));
    const account = checkedAccount(
      getAddress(key.address),
      key.publicKey,
      async (hash) => {
        const { r, s } = await hsm.sign(key.id, hash);
        if (++calls % 4 === 0) r[5] = (r[5] ?? 0) ^ 0xff;
        return { r, s };
      },
      guard,
    );
    let released = 0;
    let refused = 0;
    for (let i = 0; i < 24; i++) {
      const message = `m${i}`;
      try {
        const signature = await account.signMessage({ message });
        expect(await recoverMessageAddress({ message, signature })).toBe(getAddress(key.address));
        released++;
      } catch (error) {
        expect(error).toBeInstanceOf(SignatureMismatch);
        refused++;
      }
    }
    expect(released).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(told).toHaveLength(refused);
    hsm.close();
  });
});
