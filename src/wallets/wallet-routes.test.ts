import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ethers } from "ethers";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { result } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import type { WalletRecord } from "./wallet-service.js";

const PASSWORD = "s3cret-Pa55word!";
const KNOWN_MNEMONIC = "test test test test test test test test test test test junk";

interface Problem {
  status: number;
  code: string;
  detail: string;
}

describeEachStore("wallets over HTTP", (target) => {
  let rt: TestRuntime;
  const logLines: string[] = [];
  const get = async (path: string) => {
    const response = await fetch(`${rt.url}${path}`);
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      json: (await response.json()) as unknown,
    };
  };
  const create = async (body: unknown) => rt.post("/wallet", body);

  beforeAll(async () => {
    rt = await startTestRuntime({ store: target, logLines });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("creates a wallet whose every keystore ethers decrypts to the record's address and public key", async () => {
    const { status, json } = await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 3 });
    expect(status).toBe(200);
    const records = json as WalletRecord[];
    expect(records).toHaveLength(3);
    expect(new Set(records.map((r) => r.id)).size).toBe(1);
    expect(records.map((r) => r.index)).toEqual([0, 1, 2]);
    const salts = new Set<string>();
    const ivs = new Set<string>();
    for (const record of records) {
      expect(record.type).toBe("KEYSTORE_V3");
      expect(record.address).toBe(ethers.getAddress(record.address));
      const account = await ethers.decryptKeystoreJson(record.data, PASSWORD);
      expect(account.address).toBe(record.address);
      expect(new ethers.SigningKey(account.privateKey).publicKey).toBe(record.public_key);
      const doc = JSON.parse(record.data) as {
        crypto: { kdfparams: { salt: string }; cipherparams: { iv: string } };
      };
      salts.add(doc.crypto.kdfparams.salt);
      ivs.add(doc.crypto.cipherparams.iv);
    }
    expect(salts.size).toBe(1);
    expect(ivs.size).toBe(3);
  });

  it("derives m/44'/60'/0'/0/i: an imported mnemonic gives the well-known addresses", async () => {
    const { json } = await create({
      type: "KEYSTORE_V3",
      password: PASSWORD,
      address_quantity: 2,
      mnemonic: KNOWN_MNEMONIC,
    });
    const records = json as WalletRecord[];
    expect(records.map((r) => r.address)).toEqual([
      "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      ethers.HDNodeWallet.fromPhrase(KNOWN_MNEMONIC, undefined, "m/44'/60'/0'/0/1").address,
    ]);
  });

  it("imports a keystore v3 document with its password", async () => {
    const source = new ethers.Wallet(ethers.hexlify(ethers.randomBytes(32)));
    const keystore = await ethers.encryptKeystoreJson(source, PASSWORD, { scrypt: { N: 1024 } });
    const { status, json } = await create({
      type: "KEYSTORE_V3",
      password: PASSWORD,
      address_quantity: 1,
      keystore,
    });
    expect(status).toBe(200);
    const [record] = json as WalletRecord[];
    expect(record?.address).toBe(source.address);
    expect((await ethers.decryptKeystoreJson(record!.data, PASSWORD)).privateKey).toBe(source.privateKey);

    const wrong = await create({ type: "KEYSTORE_V3", password: "not it", address_quantity: 1, keystore });
    expect(wrong.status).toBe(401);
    expect((wrong.json as Problem).code).toBe("WRONG_PASSWORD");
    const two = await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 2, keystore });
    expect((two.json as Problem).code).toBe("INVALID_ADDRESS_QUANTITY");
  });

  it("lists every record, one wallet's records, and one record by index", async () => {
    const { json } = await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 4 });
    const mine = json as WalletRecord[];
    const all = (await get("/wallet")).json as WalletRecord[];
    expect(all).toEqual(expect.arrayContaining(mine));
    expect((await get(`/wallet/${mine[0]!.id}`)).json).toEqual(mine);
    expect((await get(`/wallet/${mine[0]!.id}?index=2`)).json).toEqual([mine[2]]);
  });

  it("new wallets are funded on both embedded chains", async () => {
    const [record] = (await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 }))
      .json as WalletRecord[];
    for (const chain of ["1001", "1002"]) {
      expect(
        BigInt(await result<string>(rt, "eth_getBalance", [record!.address], `?chain_id=${chain}`)),
      ).toBe(100n * 10n ** 18n);
    }
  });

  it.each([
    [{ password: PASSWORD, address_quantity: 1 }, 400, "VALIDATION_FAILED", /type is required/],
    [
      { type: "HD", password: PASSWORD, address_quantity: 1 },
      400,
      "VALIDATION_FAILED",
      /type must be one of "KEYSTORE_V3", "PKCS11"/,
    ],
    [{ type: "KEYSTORE_V3", address_quantity: 1 }, 400, "PASSWORD_REQUIRED", /password is required/],
    [{ type: "KEYSTORE_V3", password: null, address_quantity: 1 }, 400, "PASSWORD_REQUIRED", /password/],
    [
      { type: "KEYSTORE_V3", password: "", address_quantity: 1 },
      400,
      "PASSWORD_REQUIRED",
      /must not be empty/,
    ],
    [
      { type: "KEYSTORE_V3", password: 5, address_quantity: 1 },
      400,
      "VALIDATION_FAILED",
      /password must be string/,
    ],
    [{ type: "KEYSTORE_V3", password: PASSWORD }, 400, "VALIDATION_FAILED", /address_quantity is required/],
    [
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 0 },
      400,
      "VALIDATION_FAILED",
      /address_quantity must be >= 1/,
    ],
    [
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 101 },
      400,
      "VALIDATION_FAILED",
      /address_quantity must be <= 100/,
    ],
    [
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: "3" },
      400,
      "VALIDATION_FAILED",
      /address_quantity must be integer/,
    ],
    [{ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1.5 }, 400, "VALIDATION_FAILED", /integer/],
    [
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1, colour: "red" },
      400,
      "VALIDATION_FAILED",
      /colour is not a known field/,
    ],
    [
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1, mnemonic: "not a phrase" },
      400,
      "INVALID_MNEMONIC",
      /BIP-39/,
    ],
    [
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1, keystore: "{}" },
      400,
      "INVALID_KEYSTORE",
      /version/,
    ],
    [[1, 2], 400, "VALIDATION_FAILED", /must be object/],
    ["{oops", 400, "INVALID_JSON", /not valid JSON/],
  ])("POST /wallet %j is refused with %i %s", async (body, status, code, detail) => {
    const before = ((await get("/wallet")).json as unknown[]).length;
    const answer = await create(body);
    expect(answer.status).toBe(status);
    const problem = answer.json as Problem;
    expect(problem.code).toBe(code);
    expect(problem.detail).toMatch(detail);
    expect(((await get("/wallet")).json as unknown[]).length).toBe(before);
  });

  it("unknown wallets and indexes are 404 problems; a bad index is 400", async () => {
    const missing = await get("/wallet/00000000-0000-0000-0000-000000000000");
    expect(missing.status).toBe(404);
    expect(missing.type).toMatch(/application\/problem\+json/);
    expect((missing.json as Problem).code).toBe("WALLET_NOT_FOUND");
    const [record] = (await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 }))
      .json as WalletRecord[];
    const noIndex = await get(`/wallet/${record!.id}?index=5`);
    expect(noIndex.status).toBe(404);
    expect((noIndex.json as Problem).code).toBe("ADDRESS_NOT_FOUND");
    for (const bad of ["abc", "-1", "1.5"]) {
      const answer = await get(`/wallet/${record!.id}?index=${bad}`);
      expect(answer.status, bad).toBe(400);
      expect((answer.json as Problem).detail).toMatch(/index/);
    }
  });

  it("unlocks an address for signing; the password is checked and wrong ones lock the wallet for a while", async () => {
    const records = (await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 2 }))
      .json as WalletRecord[];
    const id = records[0]!.id;
    const unlocked = await rt.wallets.unlock(id, 1, PASSWORD);
    expect(unlocked.account.address).toBe(records[1]!.address);
    const signature = await unlocked.account.signMessage({ message: "hello" });
    expect(ethers.verifyMessage("hello", signature)).toBe(records[1]!.address);

    const codes: string[] = [];
    for (let i = 0; i < 8; i++) {
      codes.push(
        await rt.wallets.unlock(id, 0, `wrong-${i}`).then(
          () => "ok",
          (e: { code: string }) => e.code,
        ),
      );
    }
    expect(codes.slice(0, 6)).toEqual(Array(6).fill("WRONG_PASSWORD"));
    expect(codes.slice(6)).toEqual(["WALLET_LOCKED", "WALLET_LOCKED"]);
    // The right password still works from the unlock cache; the lock only stops guessing.
    expect((await rt.wallets.unlock(id, 0, PASSWORD)).address).toBe(records[0]!.address);
    const row = await rt.store.db
      .selectFrom("wallets")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(row.failed_attempts).toBe(6);
    expect(row.locked_until).toBeGreaterThan(Date.now());

    // Another wallet is not affected.
    const other = (await create({ type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 }))
      .json as WalletRecord[];
    expect((await rt.wallets.unlock(other[0]!.id, 0, PASSWORD)).address).toBe(other[0]!.address);
  });

  it("never stores or logs a password, seed or private key in clear", async () => {
    const mnemonic = ethers.Mnemonic.fromEntropy(ethers.randomBytes(32)).phrase;
    const password = "Unique-Password-4-Grep";
    const { json } = await create({ type: "KEYSTORE_V3", password, address_quantity: 2, mnemonic });
    const records = json as WalletRecord[];
    const keys = [0, 1].map((i) =>
      ethers.HDNodeWallet.fromPhrase(mnemonic, undefined, `m/44'/60'/0'/0/${i}`).privateKey.slice(2),
    );
    const secrets = [password, mnemonic, mnemonic.split(" ").slice(0, 4).join(" "), ...keys];

    let stored: string;
    if (rt.store.kind === "sqlite") {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(rt.store.db);
      stored = readFileSync(join(rt.dataDir, "chaingate.sqlite")).toString("latin1");
    } else {
      const rows = await sql<{ dump: string }>`
        select (select coalesce(string_agg(w::text, ' '), '') from wallets w) ||
               (select coalesce(string_agg(a::text, ' '), '') from wallet_addresses a) as dump`.execute(
        rt.store.db,
      );
      stored = rows.rows[0]!.dump;
    }
    expect(stored).toContain(records[0]!.address);
    for (const secret of secrets) expect(stored.includes(secret), "store holds a secret").toBe(false);

    await rt.wallets.unlock(records[0]!.id, 0, "wrong password here").catch(() => {});
    // The access log writes in batches: wait for the wallet requests' lines.
    expect(await waitUntil(() => logLines.some((l) => l.includes('"url":"/wallet"')), 10_000)).toBe(true);
    const logs = logLines.join("\n");
    for (const secret of [...secrets, "wrong password here"])
      expect(logs.includes(secret), "log holds a secret").toBe(false);
  });
});

it("10 wallets created at once all succeed and stay distinct", async () => {
  const rt = await startTestRuntime();
  try {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 5 }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const addresses = answers.flatMap((a) => (a.json as WalletRecord[]).map((r) => r.address));
    expect(new Set(addresses).size).toBe(50);
  } finally {
    await rt.close();
  }
});
