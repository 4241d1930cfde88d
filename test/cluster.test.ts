import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { parseEther, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type AnvilNode, startAnvil } from "../src/devnet/anvil-node.js";
import { type Balancer, startBalancer } from "../src/test-support/balancer.js";
import { nodeCall } from "../src/test-support/chain-helpers.js";
import { nativeResult, waitUntil } from "../src/test-support/cli.js";
import { DEV_ACCOUNT_2, DEV_PRIVATE_KEY } from "../src/test-support/evm-fixtures.js";
import { POSTGRES_AVAILABLE, type TempStore, tempStore } from "../src/test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../src/test-support/test-runtime.js";
import { newWallet } from "../src/test-support/token-helpers.js";
import { RELAYER_LEASE_MS } from "../src/transport/relayer.js";

/**
 * Three instances on one PostgreSQL behind a round-robin balancer, as an operator who outgrew one
 * process runs them: what a client sees must be one service.
 */
describe.skipIf(!POSTGRES_AVAILABLE)(
  "three instances behind a round-robin balancer on one PostgreSQL",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "chaingate-cluster-"));
    const instances: TestRuntime[] = [];
    const nodes: AnvilNode[] = [];
    let store: TempStore;
    let lb: Balancer;
    let env: Record<string, string> = {};

    const rpc = async (method: string, params: unknown[] = []) => {
      const response = await fetch(lb.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return (await response.json()) as {
        result?: unknown;
        error?: { code: number; message: string; data?: unknown };
      };
    };

    beforeAll(async () => {
      const logger = pino({ level: "silent" });
      nodes.push(
        await startAnvil({ chainId: 1001, blockTime: 0, logger, dir: join(dir, "a") }),
        await startAnvil({ chainId: 1002, blockTime: 0, logger, dir: join(dir, "b") }),
      );
      const config = join(dir, "chaingate.json");
      writeFileSync(
        config,
        JSON.stringify({
          homeChainId: 1001,
          chains: nodes.map((node) => ({
            chainId: node.chainId,
            upstreams: [{ url: node.url }],
            finality: 1,
          })),
        }),
      );
      store = await tempStore("postgres");
      env = {
        CHAINGATE_CONFIG: config,
        CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY,
        // Every instance must share the server key (docs/operations.md).
        CHAINGATE_SEAL_KEY: randomBytes(32).toString("hex"),
        // Heads polled once a second, HTTP only (no WebSocket push): each instance learns a block at
        // its own moment, up to a second apart, which is what makes a balancer's answers go back.
        CHAINGATE_HEAD_POLL_MS: "1000",

        // A per-key budget, to see it hold for the cluster rather than for each instance.
        CHAINGATE_RATE_WALLETS: "30/min",
        // Fewer sockets than instances: a share each would round up to one each (three in all).
        CHAINGATE_MAX_SOCKETS_PER_KEY: "2",
      };
      for (let i = 0; i < 3; i++)
        instances.push(
          await startTestRuntime({ store, deploy: i === 0, dataDir: join(dir, `instance-${i}`), env }),
        );
      lb = await startBalancer(instances.map((rt) => rt.url));
    }, 180_000);

    afterAll(async () => {
      await lb?.close();
      for (const rt of instances) await rt.close().catch(() => {});
      await store?.drop();
      for (const node of nodes) await node.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    async function wallet(): Promise<string> {
      const response = await fetch(`${lb.url}/wallet`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "KEYSTORE_V3", password: "cluster-pw", address_quantity: 1 }),
      });
      const [record] = (await response.json()) as { address: string }[];
      await nodeCall(nodes[0]!.url, "anvil_setBalance", [record!.address, toHex(parseEther("10"))]);
      return record!.address;
    }
    const sendFrom = (from: string) =>
      rpc("eth_sendTransaction", [{ from, to: DEV_ACCOUNT_2, value: "0x1" }]);

    it("one personal_unlockAccount through the balancer: every instance signs (9 of 9)", async () => {
      const address = await wallet();
      expect((await rpc("personal_unlockAccount", [address, "cluster-pw", 600])).result).toBe(true);
      const before = [...lb.served];
      const sends = [];
      for (let i = 0; i < 9; i++) sends.push(await sendFrom(address));
      for (const sent of sends) expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
      // The nine went to all three instances.
      expect(lb.served.map((n, i) => n - before[i]!).every((n) => n >= 3)).toBe(true);
    });

    it("one payload per nonce holds for the cluster: 9 different payloads at one nonce through the balancer, 1 signed", async () => {
      const address = await wallet();
      expect((await rpc("personal_unlockAccount", [address, "cluster-pw", 600])).result).toBe(true);
      const before = [...lb.served];
      const answers = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          rpc("eth_signTransaction", [
            { from: address, to: DEV_ACCOUNT_2, value: toHex(i + 1), gas: "0x5208", nonce: "0x5" },
          ]),
        ),
      );
      expect(lb.served.map((n, i) => n - before[i]!).every((n) => n >= 3)).toBe(true);
      expect(answers.filter((a) => a.result !== undefined)).toHaveLength(1);
      expect(
        answers.filter(
          (a) => (a.error?.data as { code?: string } | undefined)?.code === "NONCE_ALREADY_SIGNED",
        ),
      ).toHaveLength(8);
    });

    it("an instance started with another server key is not ready, and /readyz says why", async () => {
      const address = await wallet();
      // Something sealed under the cluster's key: a shared unlock.
      expect((await rpc("personal_unlockAccount", [address, "cluster-pw", 600])).result).toBe(true);
      const stray = await startTestRuntime({
        store,
        dataDir: join(dir, "stray"),
        env: { ...env, CHAINGATE_SEAL_KEY: randomBytes(32).toString("hex") },
      });
      try {
        const readyz = async () => {
          const response = await fetch(`${stray.url}/readyz`);
          return {
            status: response.status,
            body: (await response.json()) as { ready: boolean; problems?: string[] },
          };
        };
        expect(await waitUntil(async () => (await readyz()).status === 503, 20_000)).toBe(true);
        const { body } = await readyz();
        expect(body.ready).toBe(false);
        expect(body.problems?.join(" ")).toMatch(/every instance must share the same server key/);
        // Asked to sign for the address the cluster unlocked, it says why it cannot, not "locked".
        const asked = await fetch(stray.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sign", params: [address, "0x1234"] }),
        }).then((r) => r.json() as Promise<{ error?: { data?: { code?: string } } }>);
        expect(asked.error?.data?.code).toBe("SEAL_KEY_MISMATCH");
        // The cluster's own instances are ready.
        expect((await fetch(`${instances[0]!.url}/readyz`)).status).toBe(200);
      } finally {
        await stray.close();
      }
    });

    it("without a server key an unlock holds where it was made: its answer says so, and another instance says why it cannot sign", async () => {
      const { CHAINGATE_SEAL_KEY: _key, ...keyless } = env;
      const [a, b] = [
        await startTestRuntime({ store, dataDir: join(dir, "keyless-a"), env: keyless }),
        await startTestRuntime({ store, dataDir: join(dir, "keyless-b"), env: keyless }),
      ];
      try {
        const record = await newWallet(a, "keyless-pw");
        const unlocked = await a.post(`/wallet/${record.id}/unlock`, {
          password: "keyless-pw",
          seconds: 600,
        });
        expect(unlocked.status, JSON.stringify(unlocked.json)).toBe(200);
        expect(unlocked.json).toEqual([expect.objectContaining({ unlocked_on: "this_instance" })]);
        const sign = (rt: TestRuntime) =>
          rt.post("/", { jsonrpc: "2.0", id: 1, method: "eth_sign", params: [record.address, "0x1234"] });
        expect(((await sign(a)).json as { result?: string }).result).toMatch(/^0x[0-9a-f]{130}$/);
        const elsewhere = (await sign(b)).json as { error?: { message: string; data?: { code?: string } } };
        expect(elsewhere.error?.data?.code).toBe("UNLOCKED_ELSEWHERE");
        expect(elsewhere.error?.message).toMatch(/unlocked on another instance only/);
        // With the server key the cluster shares, the same unlock holds everywhere and says so.
        const shared = await instances[0]!.post("/wallet", {
          type: "KEYSTORE_V3",
          password: "keyless-pw",
          address_quantity: 1,
        });
        const [sharedRecord] = shared.json as { id: string }[];
        const everywhere = await instances[0]!.post(`/wallet/${sharedRecord!.id}/unlock`, {
          password: "keyless-pw",
          seconds: 60,
        });
        expect(everywhere.json).toEqual([expect.objectContaining({ unlocked_on: "every_instance" })]);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it("polled every 15 ms through the balancer while blocks come every second, the head never goes back", async () => {
      let mining = true;
      const miner = (async () => {
        while (mining) {
          await nodeCall(nodes[0]!.url, "evm_mine");
          await new Promise((r) => setTimeout(r, 1_000));
        }
      })();
      const seen: number[] = [];
      const latest: number[] = [];
      try {
        const until = Date.now() + 12_000;
        for (let i = 0; Date.now() < until; i++) {
          if (i % 2 === 0) seen.push(Number((await rpc("eth_blockNumber")).result));
          else
            latest.push(
              Number(
                ((await rpc("eth_getBlockByNumber", ["latest", false])).result as { number: string }).number,
              ),
            );
          await new Promise((r) => setTimeout(r, 15));
        }
      } finally {
        mining = false;
        await miner;
      }
      const backs = (list: number[]) => list.filter((n, i) => i > 0 && n < list[i - 1]!).length;
      expect(seen.length).toBeGreaterThan(100);
      expect(seen.at(-1)! - seen[0]!).toBeGreaterThanOrEqual(8);
      expect(backs(seen), "eth_blockNumber went back").toBe(0);
      expect(backs(latest), "latest went back").toBe(0);
    });

    it("a transport whose lease a killed instance holds is delivered by another within 10 s", async () => {
      const address = await wallet();
      const rows = (await (await fetch(`${lb.url}/wallet`)).json()) as { id: string; address: string }[];
      const walletId = rows.find((r) => r.address === address)!.id;
      const call = (path: string, params: Record<string, unknown>) => nativeResult(lb.url, path, params);
      await call("register_new_member", { name: `Peer ${address}`, chain_id: 1002, role: "PARTICIPANT" });
      const token = await call("create_new_ERC20_token", {
        wallet_id: walletId,
        password: "cluster-pw",
        name: "Takeover",
        symbol: "TKO",
        initial_supply: "100",
      });
      expect(
        await waitUntil(
          async () => (await rpc("eth_getTransactionReceipt", [token.tx_hash])).result != null,
          20_000,
        ),
      ).toBe(true);
      const sent = await call("trasport_token", {
        wallet_id: walletId,
        password: "cluster-pw",
        token: token.address,
        to: DEV_ACCOUNT_2,
        amount: "10",
        destination_chain_id: 1002,
      });
      // An instance took the transport and was killed: its lease is left as a live holder keeps it
      // (renewed to RELAYER_LEASE_MS ahead), and nobody will renew it again.
      const killedAt = Date.now();
      await instances[0]!.store.db
        .updateTable("transports")
        .set({ lease_owner: "an instance killed with -9", lease_until: killedAt + RELAYER_LEASE_MS })
        .where("id", "=", sent.transport_id as string)
        .execute();
      const delivered = await waitUntil(async () => {
        const row = await instances[1]!.store.db
          .selectFrom("transports")
          .select("state")
          .where("id", "=", sent.transport_id as string)
          .executeTakeFirst();
        return row?.state === "delivered";
      }, 30_000);
      expect(delivered).toBe(true);
      expect(Date.now() - killedAt).toBeLessThan(10_000);
    });

    it("one personal_lockAccount through the balancer: 2 s later no instance signs (0 of 6)", async () => {
      const address = await wallet();
      expect((await rpc("personal_unlockAccount", [address, "cluster-pw", 600])).result).toBe(true);
      // Each instance has signed with it (so each holds it in memory).
      for (let i = 0; i < 3; i++) expect((await sendFrom(address)).error).toBeUndefined();
      expect((await rpc("personal_lockAccount", [address])).result).toBe(true);
      await new Promise((r) => setTimeout(r, 2_000));
      for (let i = 0; i < 6; i++) {
        const refused = await sendFrom(address);
        expect(refused.result).toBeUndefined();
        expect(refused.error?.message).toMatch(/^authentication needed/);
      }
    });

    it("a 30-a-minute wallet budget holds for the cluster: at most 36 of 60 creations through the balancer", async () => {
      // Every instance counts the others by their heartbeats, and takes its share of the budget.
      expect(await waitUntil(async () => instances.every((rt) => rt.registry.instances === 3), 20_000)).toBe(
        true,
      );
      const answers = await Promise.all(
        Array.from({ length: 60 }, () =>
          fetch(`${lb.url}/wallet`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ type: "KEYSTORE_V3", password: "cluster-pw", address_quantity: 1 }),
          }),
        ),
      );
      const created = answers.filter((a) => a.status === 200).length;
      const limited = answers.filter((a) => a.status === 429).length;
      expect(created + limited).toBe(60);
      expect(created).toBeGreaterThan(0);
      expect(created).toBeLessThanOrEqual(36);
    });

    it("a socket cap of 2 holds for three instances: 6 upgrades through the balancer, 2 open, a closed one's slot taken again", async () => {
      const attempt = () =>
        new Promise<WebSocket | undefined>((resolve) => {
          const socket = new WebSocket(lb.url.replace("http", "ws"));
          socket.once("open", () => resolve(socket));
          socket.once("error", () => resolve(undefined));
        });
      const opened: WebSocket[] = [];
      for (let i = 0; i < 6; i++) {
        const socket = await attempt();
        if (socket) opened.push(socket);
      }
      expect(opened.length).toBe(2);
      const closed = new Promise((r) => opened[0]!.once("close", r));
      opened[0]!.close();
      await closed;
      // Its slot is given back: within a few tries (the release is a store write) one opens again.
      let again: WebSocket | undefined;
      expect(
        await waitUntil(async () => {
          again = await attempt();
          return again !== undefined;
        }, 10_000),
      ).toBe(true);
      const all = [opened[1]!, again!];
      await Promise.all(
        all.map(
          (socket) =>
            new Promise((r) => {
              socket.once("close", r);
              socket.close();
            }),
        ),
      );
      // Every slot given back before the next test opens its own.
      expect(
        await waitUntil(
          async () =>
            Number(
              (
                await instances
                  .find((_, n) => !lb.down.has(n))!
                  .store.db.selectFrom("held_slots")
                  .select((eb) => eb.fn.countAll<number>().as("n"))
                  .executeTakeFirst()
              )?.n,
            ) === 0,
          10_000,
        ),
      ).toBe(true);
    });

    it("a newHeads client whose instance goes away resumes on another, with no gap and no duplicate", async () => {
      const heads: number[] = [];
      /** What each socket was told, in order: answers and the subscription each notification names. */
      const answers: string[] = [];
      const open = async () => {
        const socket = new WebSocket(lb.url.replace("http", "ws"));
        const cursors: string[] = [];
        socket.on("message", (data) => {
          const message = JSON.parse(data.toString()) as {
            id?: number;
            result?: string;
            method?: string;
            params?: { subscription: string; result: { number: string }; cursor: string };
          };
          if (message.id !== undefined) answers.push(`answer ${message.result}`);
          if (message.method !== "eth_subscription") return;
          answers.push(`note ${message.params!.subscription}`);
          heads.push(Number(BigInt(message.params!.result.number)));
          cursors.push(message.params!.cursor);
        });
        await new Promise<void>((resolve, reject) => {
          socket.once("open", () => resolve());
          socket.once("error", reject);
        });
        return { socket, cursors };
      };
      const before = [...lb.served];
      const first = await open();
      const holder = lb.served.findIndex((n, i) => n > before[i]!);
      first.socket.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_subscribe",
          params: ["newHeads", { resumable: true }],
        }),
      );
      // A subscription sees the heads after its answer: the blocks are mined once it has one (on a
      // slow run the two blocks could otherwise come before it, and never be sent).
      const answered = () => answers.filter((a) => a.startsWith("answer ")).length;
      expect(await waitUntil(() => answered() >= 1, 20_000)).toBe(true);
      for (let i = 0; i < 2; i++) await nodeCall(nodes[0]!.url, "evm_mine");
      expect(await waitUntil(() => first.cursors.length >= 2, 20_000)).toBe(true);
      // The instance holding the socket stops; blocks go on meanwhile.
      await instances[holder]!.close();
      lb.down.add(holder);
      for (let i = 0; i < 3; i++) await nodeCall(nodes[0]!.url, "evm_mine");
      const second = await open();
      second.socket.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "eth_subscribe",
          params: ["newHeads", { resumeAfter: first.cursors.at(-1) }],
        }),
      );
      expect(await waitUntil(() => answered() >= 2, 20_000)).toBe(true);
      await nodeCall(nodes[0]!.url, "evm_mine");
      expect(await waitUntil(() => heads.length >= 6, 20_000)).toBe(true);
      expect(heads).toEqual(Array.from({ length: heads.length }, (_, i) => heads[0]! + i));
      // The resumed stream's replay came after its answer, under the id it answered.
      const resumedAt = answers.lastIndexOf(answers.filter((a) => a.startsWith("answer ")).at(-1)!);
      const id = answers[resumedAt]!.slice("answer ".length);
      expect(answers.slice(resumedAt + 1).length).toBeGreaterThanOrEqual(4);
      for (const note of answers.slice(resumedAt + 1)) expect(note).toBe(`note ${id}`);
      second.socket.close();
    });
  },
);
