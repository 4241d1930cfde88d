/** Locates the anvil binary shipped inside the @foundry-rs/anvil platform package (no download, no wrapper). */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { ChaingateError } from "../errors/chaingate-error.js";

const PLATFORM_PACKAGES: Record<string, string> = {
  "linux-x64": "@foundry-rs/anvil-linux-amd64",
  "linux-arm64": "@foundry-rs/anvil-linux-arm64",
  "darwin-x64": "@foundry-rs/anvil-darwin-amd64",
  "darwin-arm64": "@foundry-rs/anvil-darwin-arm64",
  "win32-x64": "@foundry-rs/anvil-win32-amd64",
};

export function anvilBinaryPath(): string {
  const fromEnv = process.env.CHAINGATE_ANVIL_BIN;
  if (fromEnv) return fromEnv;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[platform];
  if (!pkg) {
    throw new ChaingateError(`anvil is not shipped for ${platform}; configure CHAINGATE_UPSTREAMS instead`, {
      code: "DEVNET_UNSUPPORTED",
    });
  }
  const require = createRequire(import.meta.url);
  let root: string;
  try {
    root = dirname(require.resolve(`${pkg}/package.json`));
  } catch (error) {
    throw new ChaingateError(`${pkg} is not installed (run npm ci)`, {
      code: "DEVNET_UNSUPPORTED",
      cause: error,
    });
  }
  const binary = join(root, "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
  if (!existsSync(binary))
    throw new ChaingateError(`anvil binary missing at ${binary}`, { code: "DEVNET_UNSUPPORTED" });
  return binary;
}
