/** Starts the built chaingate (dist/main.js) as its own process for a benchmark, and answers its URL once ready. */
import { type ChildProcess, spawn } from "node:child_process";

export const MAIN = new URL("../dist/main.js", import.meta.url).pathname;

export async function startChaingateProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      if (out.length < 100_000) out += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"chaingate ready"/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", () => reject(new Error(`chaingate exited: ${out}`)));
  });
  return { child, url };
}
