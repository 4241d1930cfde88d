/** Foundry's cast, from the @foundry-rs/cast platform package (no download), for client tests. */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export function castBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@foundry-rs/cast-${process.platform === "darwin" ? "darwin" : process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), "bin", "cast");
}

/** Runs cast with the given arguments; resolves with its standard output, rejects with its error output. */
export function cast(args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(castBinary(), args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) reject(new Error(`cast ${args[0]} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}
