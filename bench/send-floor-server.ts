/** The floor of a custody send, for bench/send-floor.ts: sign natively and check, record durably, send, answer; nothing else a service owes. */

import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import pg from "pg";
import { Pool } from "undici";
import type { Hex } from "viem";
import { OpenRequests } from "../src/http/fast-path-server.js";
import { keccak256OfHex } from "../src/keys/keccak.js";
import { type SignatureBytes, signInOnePass } from "../src/keys/one-pass-transaction.js";
import { WalFlush } from "../src/store/wal-flush.js";
import { benchTransfer } from "./bench-transfer.js";

/**
 * What any service that holds the key must do before it answers a hash, with chaingate's own parts
 * where it has them: the one-pass signer, libsecp256k1 (each signature recovered and compared, as
 * chaingate checks every one), a SQLite row in WAL mode made durable by one shared fdatasync
 * (WalFlush; on the event loop when no other request is open, as chaingate's group commit does) before
 * the bytes are broadcast, one send to the node. The rows that arrive in one
 * turn of the event loop go in one transaction, as a group commit would. It has no wallets, no
 * policies, no audit, no nonce ledger beyond a counter, no idempotency, no access log, no metrics
 * and follows nothing to finality: a floor, not a service. Run by the bench, never deployed.
 *
 * On PostgreSQL (a database URL as the fourth argument) a turn's rows go in one INSERT, committed
 * on its own (the server's WAL flushed before it answers, as `synchronous_commit` has it): one
 * round trip before the broadcast.
 *
 * Arguments: the node's URL, the 0x private key of the address it sends from, the directory for
 * its SQLite database, and optionally a PostgreSQL URL instead. It prints "send floor at <url>" once
 * it listens.
 */
const [nodeUrl, keyHex, dir, databaseUrl] = process.argv.slice(2);
if (!nodeUrl || !keyHex || !dir)
  throw new Error("usage: send-floor-server <node> <key> <dir> [postgres-url]");

interface Secp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
  publicKeyCreate(privateKey: Uint8Array, compressed: boolean): Uint8Array;
}
const secp = createRequire(import.meta.url)("secp256k1/bindings") as Secp256k1;
const key = Buffer.from(keyHex.slice(2), "hex");
const publicKey = Buffer.from(secp.publicKeyCreate(key, false));

/** Requests being served: a lone one's flush waits on the event loop (decision 189). */
const open = new OpenRequests();

/** Writes a turn's rows durably: resolves once they would survive a crash of the machine. */
type WriteRows = (rows: readonly { nonce: number; raw: Hex; hash: Hex }[]) => Promise<void>;

function sqliteRows(): WriteRows {
  const path = `${dir}/floor.sqlite`;
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(
    "create table if not exists sent (nonce integer primary key, raw text not null, hash text not null)",
  );
  const insert = db.prepare("insert into sent (nonce, raw, hash) values (?, ?, ?)");
  const flush = new WalFlush(`${path}-wal`);
  const writeAll = db.transaction((rows: Parameters<WriteRows>[0]) => {
    for (const row of rows) insert.run(row.nonce, row.raw, row.hash);
  });
  return (rows) => {
    writeAll(rows);
    return flush.flush(open.count <= 1);
  };
}

async function postgresRows(url: string): Promise<WriteRows> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  await pool.query(
    "create table if not exists sent (nonce bigint primary key, raw text not null, hash text not null)",
  );
  return async (rows) => {
    const values = rows.map((_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`).join(", ");
    await pool.query(
      `insert into sent (nonce, raw, hash) values ${values}`,
      rows.flatMap((row) => [row.nonce, row.raw, row.hash]),
    );
  };
}

const writeRows = databaseUrl ? await postgresRows(databaseUrl) : sqliteRows();
const node = new Pool(nodeUrl, { connections: 16 });

async function sign(digest: Uint8Array): Promise<SignatureBytes> {
  const { signature, recid } = secp.ecdsaSign(digest, key);
  if (!publicKey.equals(secp.ecdsaRecover(signature, recid, digest, false)))
    throw new Error("a faulty signature");
  return { r: signature.subarray(0, 32), s: signature.subarray(32), yParity: recid };
}

/** Rows of this turn: written together, then each caller goes on once they are durable. */
let pending: { nonce: number; raw: Hex; hash: Hex; done: () => void; fail: (error: unknown) => void }[] = [];
function record(nonce: number, raw: Hex, hash: Hex): Promise<void> {
  return new Promise((done, fail) => {
    if (pending.length === 0)
      setImmediate(() => {
        const rows = pending;
        pending = [];
        writeRows(rows).then(
          () => {
            for (const row of rows) row.done();
          },
          (error: unknown) => {
            for (const row of rows) row.fail(error);
          },
        );
      });
    pending.push({ nonce, raw, hash, done, fail });
  });
}

let nextNonce = 0;
async function send(): Promise<Hex> {
  const nonce = nextNonce++;
  const raw = await signInOnePass(benchTransfer(nonce), sign);
  const hash = keccak256OfHex(raw);
  await record(nonce, raw, hash);
  const answer = await node.request({
    path: "/",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: `{"jsonrpc":"2.0","id":${nonce},"method":"eth_sendRawTransaction","params":["${raw}"]}`,
  });
  const text = await answer.body.text();
  if (!text.includes('"result"')) throw new Error(`the node refused: ${text}`);
  return hash;
}

createServer((request, response) => {
  open.opened(response);
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    // The body is read as a service would read it (a caller's JSON), though the floor needs nothing in it.
    JSON.parse(Buffer.concat(chunks).toString("utf8"));
    send().then(
      (hash) => {
        const text = `{"tx_hash":"${hash}"}`;
        response.writeHead(200, { "content-type": "application/json", "content-length": text.length });
        response.end(text);
      },
      (error: unknown) => {
        response.writeHead(500, { "content-type": "text/plain" });
        response.end(String(error));
      },
    );
  });
}).listen(0, "127.0.0.1", function (this: Server) {
  console.log(`send floor at http://127.0.0.1:${(this.address() as AddressInfo).port}`);
});
