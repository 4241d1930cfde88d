/** A SoftHSM2 token of a test's own, in a temp folder (SOFTHSM2_CONF), with its PIN in a file: the real PKCS#11 interface, no hardware. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's softhsm2 package: where its module and tool are (.ci/run installs it). */
export const SOFTHSM_MODULE = "/usr/lib/softhsm/libsofthsm2.so";
export const SOFTHSM_AVAILABLE =
  existsSync(SOFTHSM_MODULE) && existsSync("/usr/bin/softhsm2-util") && existsSync("/usr/bin/pkcs11-tool");

if (!SOFTHSM_AVAILABLE)
  process.stdout.write(
    "\n[chaingate tests] *** no SoftHSM2 (Debian's softhsm2): SKIPPING the PKCS#11 tests (.ci/run installs it). ***\n",
  );

export interface SoftHsmToken {
  module: string;
  label: string;
  pin: string;
  pinFile: string;
  dir: string;
  /** The environment a chaingate signing with this token needs. */
  env: Record<string, string>;
  remove(): void;
}

/** A fresh token labelled `label`; SOFTHSM2_CONF is set for this process (the module reads it when loaded). */
export function softHsmToken(label: string): SoftHsmToken {
  const dir = mkdtempSync(join(tmpdir(), "chaingate-softhsm-"));
  mkdirSync(join(dir, "tokens"));
  const conf = join(dir, "softhsm2.conf");
  writeFileSync(
    conf,
    `directories.tokendir = ${join(dir, "tokens")}\nobjectstore.backend = file\nlog.level = ERROR\n`,
  );
  process.env.SOFTHSM2_CONF = conf;
  const pin = "246810";
  execFileSync(
    "softhsm2-util",
    ["--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", "13579"],
    {
      env: { ...process.env, SOFTHSM2_CONF: conf },
      stdio: "ignore",
    },
  );
  const pinFile = join(dir, "pin");
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  return {
    module: SOFTHSM_MODULE,
    label,
    pin,
    pinFile,
    dir,
    env: {
      CHAINGATE_PKCS11_MODULE: SOFTHSM_MODULE,
      CHAINGATE_PKCS11_TOKEN: label,
      CHAINGATE_PKCS11_PIN_FILE: pinFile,
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A secp256k1 key pair made on the token by OpenSC's pkcs11-tool (outside chaingate), as an operator would. */
export function keypairOnToken(token: SoftHsmToken, label: string, id?: string): void {
  execFileSync(
    "pkcs11-tool",
    [
      "--module",
      token.module,
      "--token-label",
      token.label,
      "--login",
      "--pin",
      token.pin,
      "--keypairgen",
      "--key-type",
      "EC:secp256k1",
      "--label",
      label,
      ...(id === undefined ? [] : ["--id", id]),
    ],
    { env: process.env, stdio: "ignore" },
  );
}
