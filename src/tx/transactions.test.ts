import { expect, it } from "vitest";
import { loadConfig } from "../config/load-config.js";
import { nodeCall, receiptOf, result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore, POSTGRES_AVAILABLE, tempStore } from "../test-support/stores.js";
import { startTestRuntime, suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { transferBurst } from "../test-support/token-helpers.js";
import type { TransferRecord } from "./list-transfers.js";

const PASSWORD = "tx-test-password";
const FAST_TRACKER = { CHAINGATE_TRACKER_INTERVAL_MS: "100" };

interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: Record<string, unknown>;
}

async function newWallet(rt: TestRuntime, quantity = 1): Promise<{ id: string; addresses: string[] }> {
  const { json } = await rt.post("/wallet", {
    type: "KEYSTORE_V3",
    password: PASSWORD,
    address_quantity: quantity,
  });
  const records = json as { id: string; address: string }[];
  return { id: records[0]!.id, addresses: records.map((r) => r.address) };
}

async function transfers(rt: TestRuntime, filter: Record<string, unknown> = {}): Promise<TransferRecord[]> {
  const out: TransferRecord[] = [];
  let cursor: string | null = null;
  do {
    const { json } = await rt.post("/list_all_transfers", {
      ...filter,
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    const page = (json as { result: { transfers: TransferRecord[]; next_cursor: string | null } }).result;
    out.push(...page.transfers);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every transaction of `address` on the chain, by nonce: checks no nonce is missing or repeated. */
async function minedNonces(rt: TestRuntime, hashes: string[]): Promise<number[]> {
  const nonces: number[] = [];
  for (const hash of hashes) {
    // A transaction queued behind a refused nonce is mined once the gap filler is: wait as a client would.
    let receipt: { status: string } | null = null;
    const deadline = Date.now() + 30_000;
    while (!receipt && Date.now() < deadline) {
      receipt = await result<{ status: string } | null>(rt, "eth_getTransactionReceipt", [hash]);
      if (!receipt) await new Promise((r) => setTimeout(r, 100));
    }
    if (!receipt) {
      // What the gateway recorded for it, so a failure says why the chain does not have it.
      const row = await rt.store.db
        .selectFrom("transactions")
        .selectAll()
        .where("tx_hash", "=", hash)
        .executeTakeFirst();
      const pooled = await result<unknown>(rt, "eth_getTransactionByHash", [hash]);
      const mined = Number(
        await result<string>(rt, "eth_getTransactionCount", [row?.from_address, "latest"]),
      );
      const around = await rt.store.db
        .selectFrom("transactions")
        .select(["nonce", "state", "tx_hash", "broadcasts", "error", "replaced_by", "replaces"])
        .where("from_address", "=", row?.from_address ?? "")
        .where("nonce", ">=", mined - 1)
        .where("nonce", "<=", mined + 1)
        .execute();
      const inPool = await Promise.all(
        around.map(async (r) => ({
          nonce: r.nonce,
          known:
            (await result<{ blockNumber: string | null } | null>(rt, "eth_getTransactionByHash", [
              r.tx_hash,
            ])) !== null,
        })),
      );
      const node = rt.devnet!.nodes.find((n) => n.chainId === 1001)!.url;
      const status = await nodeCall(node, "txpool_status");
      expect.fail(
        `${hash} has no receipt; row ${JSON.stringify({ ...row, raw: undefined })}; node has ${JSON.stringify(pooled)}; ` +
          `chain nonce ${mined}; rows there ${JSON.stringify(around)}; known to the node ${JSON.stringify(inPool)}; ` +
          `txpool ${JSON.stringify(status)}`,
      );
    }
    expect(receipt?.status, hash).toBe("0x1");
    const tx = await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [hash]);
    nonces.push(Number(tx.nonce));
  }
  return nonces.sort((a, b) => a - b);
}

describeEachStore("POST /transaction", (target) => {
  const rt = suiteRuntime({ store: target, env: FAST_TRACKER });

  it("500 concurrent transactions from one address get nonces 0..499, all mined, then all confirmed", async () => {
    const wallet = await newWallet(rt);
    const answers = await transferBurst(rt, wallet.id, 500, { password: PASSWORD, index: 0 });
    expect(answers.map((a) => a.status)).toEqual(Array(500).fill(200));
    const hashes = answers.map((a) => (a.json as { tx_hash: string }).tx_hash);
    expect(new Set(hashes).size).toBe(500);
    expect(await minedNonces(rt, hashes)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    await waitFor(
      async () => (await transfers(rt, { wallet_id: wallet.id, state: "confirmed" })).length === 500,
      30_000,
    );
    const records = await transfers(rt, { wallet_id: wallet.id });
    expect(records).toHaveLength(500);
    expect(records.every((r) => r.state === "confirmed" && r.block_number !== null)).toBe(true);
    // Newest first.
    expect(records[0]!.created_at >= records[499]!.created_at).toBe(true);
  });

  it("a request the node refuses mid-burst leaves no gap: every later transaction is mined", async () => {
    const wallet = await newWallet(rt);
    const ether = 10n ** 18n;
    // 100 ETH funded: the 150 ETH request is refused by the node whatever the order, and its nonce
    // is either given back (it was the last one out) or filled (later ones were already out).
    const values = [...Array(5).fill(ether), 150n * ether, ...Array(5).fill(ether)];
    const answers = await Promise.all(
      values.map((value) =>
        rt.post("/transaction", {
          wallet_id: wallet.id,
          password: PASSWORD,
          transaction: { to: DEV_ACCOUNT_2, value: value.toString() },
        }),
      ),
    );
    const ok = answers.filter((a) => a.status === 200).map((a) => (a.json as { tx_hash: string }).tx_hash);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(1);
    expect(ok).toHaveLength(10);
    for (const r of refused) expect((r.json as Problem).code).toBe("INSUFFICIENT_FUNDS");
    await minedNonces(rt, ok);
    // Afterwards the account's next transaction goes straight through.
    const next = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      transaction: { to: DEV_ACCOUNT_2, value: "1" },
    });
    expect(next.status).toBe(200);
    await minedNonces(rt, [(next.json as { tx_hash: string }).tx_hash]);
    // The chain's nonce equals the number of mined transactions (transfers and gap fillers): no hole.
    const count = Number(
      await result<string>(rt, "eth_getTransactionCount", [wallet.addresses[0], "latest"]),
    );
    const mined = (await transfers(rt, { address: wallet.addresses[0] })).filter((r) => r.state !== "failed");
    expect(mined.length).toBe(count);
  });

  it("the same Idempotency-Key and body return the first answer; another body is 409", async () => {
    const wallet = await newWallet(rt);
    const body = { wallet_id: wallet.id, password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value: "7" } };
    const first = await rt.post("/transaction", body, { "idempotency-key": "order-42" });
    const again = await rt.post(
      "/transaction",
      { ...body, transaction: { value: "7", to: DEV_ACCOUNT_2 } },
      { "idempotency-key": "order-42" },
    );
    expect(again.json).toEqual(first.json);
    // The key is no credential: a replay with a wrong password is refused like a first try would be.
    const guessed = await rt.post(
      "/transaction",
      { ...body, password: "not the password" },
      { "idempotency-key": "order-42" },
    );
    expect(guessed.status).toBe(401);
    expect((guessed.json as Problem).code).toBe("WRONG_PASSWORD");
    expect(JSON.stringify(guessed.json)).not.toContain((first.json as { tx_hash: string }).tx_hash);
    const other = await rt.post(
      "/transaction",
      { ...body, transaction: { to: DEV_ACCOUNT_2, value: "8" } },
      { "idempotency-key": "order-42" },
    );
    expect(other.status).toBe(409);
    expect((other.json as Problem).code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(await transfers(rt, { wallet_id: wallet.id })).toHaveLength(1);
  });

  it("deploys a contract when `to` is absent", async () => {
    const wallet = await newWallet(rt);
    const { status, json } = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      transaction: { data: "0x600d80600b6000396000f363deadbeef6000526004601cfd" },
    });
    expect(status).toBe(200);
    const receipt = await receiptOf(rt, (json as { tx_hash: string }).tx_hash);
    expect(receipt.contractAddress).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it("sends on the peer chain with chain_id", async () => {
    const wallet = await newWallet(rt);
    const { json } = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      chain_id: 1002,
      transaction: { to: DEV_ACCOUNT_2, value: "5" },
    });
    const hash = (json as { tx_hash: string }).tx_hash;
    const tx = await result<{ chainId: string } | null>(
      rt,
      "eth_getTransactionByHash",
      [hash],
      "?chain_id=1002",
    );
    expect(tx?.chainId).toBe("0x3ea");
    expect(await result(rt, "eth_getTransactionByHash", [hash])).toBeNull();
  });

  it.each([
    [{ password: PASSWORD, transaction: {} }, 400, "WALLET_ID_REQUIRED"],
    [{ wallet_id: "x", transaction: {} }, 400, "PASSWORD_REQUIRED"],
    [{ wallet_id: "x", password: PASSWORD }, 400, "VALIDATION_FAILED"],
    [
      {
        wallet_id: "00000000-0000-0000-0000-000000000000",
        password: PASSWORD,
        transaction: { to: DEV_ACCOUNT_2 },
      },
      404,
      "WALLET_NOT_FOUND",
    ],
    [{ wallet_id: "x", password: PASSWORD, transaction: { to: "0x123" } }, 400, "INVALID_ADDRESS"],
    [
      { wallet_id: "x", password: PASSWORD, transaction: { to: DEV_ACCOUNT_2.replace("C", "c") } },
      400,
      "INVALID_ADDRESS",
    ],
    [
      { wallet_id: "x", password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, data: "0xabc" } },
      400,
      "INVALID_HEX",
    ],
    [
      { wallet_id: "x", password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value: "-1" } },
      400,
      "INVALID_VALUE",
    ],
    [
      { wallet_id: "x", password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value: "1.5" } },
      400,
      "INVALID_VALUE",
    ],
    [
      { wallet_id: "x", password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value: 5 } },
      400,
      "VALIDATION_FAILED",
    ],
    [{ wallet_id: "x", password: PASSWORD, transaction: {} }, 400, "INVALID_TRANSACTION"],
    [
      { wallet_id: "x", password: PASSWORD, chain_id: 5, transaction: { to: DEV_ACCOUNT_2 } },
      400,
      "UNKNOWN_CHAIN",
    ],
  ])("%j is refused with %i %s and records nothing", async (body, status, code) => {
    const before = (await transfers(rt)).length;
    const answer = await rt.post("/transaction", body);
    expect(answer.status).toBe(status);
    expect((answer.json as Problem).code).toBe(code);
    expect((await transfers(rt)).length).toBe(before);
  });

  it("wrong passwords are 401, unknown indexes 404, a revert at estimation 422 with its data", async () => {
    const wallet = await newWallet(rt);
    const wrong = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: "nope",
      transaction: { to: DEV_ACCOUNT_2 },
    });
    expect(wrong.status).toBe(401);
    const index = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      index: 3,
      transaction: { to: DEV_ACCOUNT_2 },
    });
    expect((index.json as Problem).code).toBe("ADDRESS_NOT_FOUND");
    const deploy = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      transaction: { data: "0x600d80600b6000396000f363deadbeef6000526004601cfd" },
    });
    const receipt = await receiptOf(rt, (deploy.json as { tx_hash: string }).tx_hash);
    const revert = await rt.post("/transaction", {
      wallet_id: wallet.id,
      password: PASSWORD,
      transaction: { to: receipt.contractAddress },
    });
    expect(revert.status).toBe(422);
    expect((revert.json as Problem).code).toBe("EXECUTION_REVERTED");
    expect((revert.json as Problem).errors?.revert_data).toBe("0xdeadbeef");
  });

  it("list_all_transfers filters, pages, and rejects bad filters with -32602", async () => {
    const wallet = await newWallet(rt);
    for (let i = 0; i < 3; i++) {
      await rt.post("/transaction", {
        wallet_id: wallet.id,
        password: PASSWORD,
        transaction: { to: DEV_ACCOUNT_2, value: "1" },
      });
    }
    const { json } = await rt.post("/list_all_transfers", {
      jsonrpc: "2.0",
      id: 9,
      params: [{ wallet_id: wallet.id, limit: 2 }],
    });
    const page = json as { id: number; result: { transfers: TransferRecord[]; next_cursor: string } };
    expect(page.id).toBe(9);
    expect(page.result.transfers).toHaveLength(2);
    const rest = await rt.post("/list_all_transfers", {
      wallet_id: wallet.id,
      cursor: page.result.next_cursor,
    });
    const second = (rest.json as { result: { transfers: TransferRecord[]; next_cursor: null } }).result;
    expect(second.transfers).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    const nonces = [...page.result.transfers, ...second.transfers].map((t) => t.nonce);
    expect(nonces).toEqual([2, 1, 0]);
    for (const bad of [{ state: "lost" }, { limit: 0 }, { cursor: "zzz" }, { colour: 1 }]) {
      const answer = await rt.post("/list_all_transfers", bad);
      expect((answer.json as { error: { code: number } }).error.code, JSON.stringify(bad)).toBe(-32602);
    }
  });
});

it.skipIf(!POSTGRES_AVAILABLE)(
  "two chaingate instances on one PostgreSQL share the nonce ledger",
  async () => {
    const store = await tempStore("postgres");
    const first = await startTestRuntime({ store, env: FAST_TRACKER });
    try {
      const homeUrl = first.devnet!.nodes.find((n) => n.chainId === 1001)!.url;
      const second = await startTestRuntime({
        store,
        env: { ...FAST_TRACKER, CHAINGATE_UPSTREAMS: homeUrl },
      });
      try {
        expect(loadConfig({ env: { CHAINGATE_UPSTREAMS: homeUrl } }).chains).toHaveLength(1);
        const wallet = await newWallet(first);
        const answers = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            (i % 2 === 0 ? first : second).post("/transaction", {
              wallet_id: wallet.id,
              password: PASSWORD,
              transaction: { to: DEV_ACCOUNT_2, value: String(i + 1) },
            }),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(200).fill(200));
        const hashes = answers.map((a) => (a.json as { tx_hash: string }).tx_hash);
        expect(await minedNonces(first, hashes)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      await store.drop();
    }
  },
);
