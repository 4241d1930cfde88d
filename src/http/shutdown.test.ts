import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { anvilsFor, killStartedClis, startCli, waitUntil } from "../test-support/cli.js";

const dataDir = mkdtempSync(join(tmpdir(), "chaingate-shutdown-"));
afterAll(async () => {
  killStartedClis();
  await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000);
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * A wallet creation asked of `url`, given time to be under way: with the standard KDF it is still in
 * flight when the test then signals the process.
 */
async function walletCreationInFlight(url: string): Promise<{ answer: Promise<Response> }> {
  const answer = fetch(`${url}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "KEYSTORE_V3", password: "pw", address_quantity: 2 }),
  });
  await new Promise((r) => setTimeout(r, 150));
  // Wrapped: an async function returning the promise itself would wait for the answer.
  return { answer };
}

it("a body that never finishes is cut off after --request-timeout-ms", async () => {
  const cli = await startCli(dataDir, { CHAINGATE_REQUEST_TIMEOUT_MS: "500" });
  try {
    const { port } = new URL(cli.url);
    const started = Date.now();
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(
          "POST /eth_chainId HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
        );
      });
      let answer = "";
      socket.on("data", (chunk) => {
        answer += chunk.toString();
      });
      socket.on("close", () => resolve(answer));
      socket.setTimeout(10_000, () => {
        resolve("still open after 10 s");
        socket.destroy();
      });
    });
    expect(outcome).toMatch(/^HTTP\/1\.1 408|^$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    cli.child.kill("SIGTERM");
    await cli.exited;
  }
}, 60_000);

it("SIGTERM lets an in-flight request finish, refuses new ones, and stops the chains", async () => {
  // The standard KDF makes a wallet creation take long enough to be in flight when the signal comes.
  const cli = await startCli(dataDir, { CHAINGATE_KDF: "standard" });
  const inFlight = await walletCreationInFlight(cli.url);
  cli.child.kill("SIGTERM");
  const answer = await inFlight.answer;
  expect(answer.status).toBe(200);
  expect((await answer.json()) as unknown[]).toHaveLength(2);
  expect(await cli.exited).toBe(0);
  const lines = cli
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; signal?: string });
  expect(lines.at(-1)).toMatchObject({ msg: "chaingate stopped", signal: "SIGTERM" });
  await expect(fetch(`${cli.url}/healthz`)).rejects.toThrow();
  expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);
}, 60_000);

it("SIGTERM ends the process though nobody reads its log: what the reader did not take is dropped after a bound", async () => {
  const cli = await startCli(dataDir);
  // The log's reader stops: our end of the pipe is read no more, and the requests below write
  // access-log lines (about 200 bytes each) until the pipe and the access log's own backlog are full.
  cli.child.stdout!.pause();
  const before = cli.output().length;
  for (let burst = 0; burst < 20; burst++)
    await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${cli.url}/eth_chainId`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }).then((r) => r.arrayBuffer()),
      ),
    );
  // Access-log lines go out at most 250 ms late: wait until the gateway has stopped getting them out.
  await new Promise((r) => setTimeout(r, 1_000));
  cli.child.kill("SIGTERM");
  // Before decision 241 the exit's synchronous flush retried the full pipe every 100 ms, forever.
  const code = await Promise.race([
    cli.exited,
    new Promise((r) => setTimeout(() => r("still running"), 40_000)),
  ]);
  expect(code).toBe(0);
  expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);
  // The output read afterwards: the access log's lines up to where the reader stopped, whole, and
  // not the stop's own lines, which were queued behind them and dropped (so the pipe was full: the
  // case this test is about).
  cli.child.stdout!.resume();
  await waitUntil(() => cli.child.stdout!.readableEnded, 10_000);
  const after = cli.output().slice(before);
  expect(after).toContain('"msg":"request"');
  expect(after).not.toContain('"msg":"chaingate stopped"');
  // Every line the reader got is whole but the last, which the drop may have cut.
  const whole = after.slice(0, after.lastIndexOf("\n")).split("\n");
  for (const line of whole.filter((l) => l.startsWith("{"))) expect(() => JSON.parse(line)).not.toThrow();
}, 120_000);

it("an uncaught exception stops the service as a signal does, and a signal during that stop joins it: exit code 1", async () => {
  // The real process, made to throw where nothing catches: on SIGUSR2 it signals itself SIGTERM and
  // throws, so the SIGTERM is handled while the exception's stop runs. Before decision 242 that
  // SIGTERM ran a second stop, which found the runtime's steps taken, resolved at once and exited 0
  // in the middle of the first.
  const preload = join(dataDir, "uncaught-on-sigusr2.mjs");
  writeFileSync(
    preload,
    `import { isMainThread } from "node:worker_threads";
if (isMainThread) process.on("SIGUSR2", () => { process.kill(process.pid, "SIGTERM"); throw new Error("thrown by the test"); });
`,
  );
  // The standard KDF keeps a wallet creation in flight across the stop, which waits for it.
  const cli = await startCli(dataDir, {
    CHAINGATE_KDF: "standard",
    NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`,
  });
  const inFlight = await walletCreationInFlight(cli.url);
  cli.child.kill("SIGUSR2");
  const answer = await inFlight.answer;
  expect(answer.status).toBe(200);
  expect(await cli.exited).toBe(1);
  const lines = cli
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; cause?: string; err?: { message: string } });
  expect(lines.find((l) => l.msg === "uncaught exception; stopping")?.err?.message).toBe(
    "thrown by the test",
  );
  // One stop, begun by the exception, finished before the exit.
  expect(lines.filter((l) => l.msg === "shutting down")).toHaveLength(1);
  expect(lines.at(-1)).toMatchObject({ msg: "chaingate stopped", cause: "uncaught exception" });
  expect(await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);
}, 60_000);
