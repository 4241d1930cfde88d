/** PKCS11 wallets on a real PKCS#11 interface (SoftHSM2): keys made and adopted on the token, every signing path through it, no key material anywhere. */
import { renameSync } from "node:fs";
import { join } from "node:path";
import { ethers } from "ethers";
import pkcs11js from "pkcs11js";
import {
  createWalletClient,
  type Hex,
  http,
  parseTransaction,
  recoverMessageAddress,
  recoverTransactionAddress,
  recoverTypedDataAddress,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Web3 } from "web3";
import { cast } from "../test-support/cast.js";
import { chainAt, type Envelope, nodeCall, nodeReceipt, nodeUrlOf } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import {
  keypairOnToken,
  SOFTHSM_AVAILABLE,
  type SoftHsmToken,
  softHsmToken,
} from "../test-support/softhsm.js";
import { POSTGRES_AVAILABLE, type StoreTarget, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { ok } from "../test-support/token-helpers.js";

const TYPED = {
  domain: { name: "Mail", version: "1", chainId: 1001 },
  types: { Mail: [{ name: "contents", type: "string" }] },
  primaryType: "Mail",
  message: { contents: "hello from the token" },
} as const;

for (const target of ["sqlite", "postgres"] as StoreTarget[])
  describe.skipIf(!SOFTHSM_AVAILABLE || (target === "postgres" && !POSTGRES_AVAILABLE))(
    `PKCS11 wallets on SoftHSM2 [${target}]`,
    () => {
      let token: SoftHsmToken;
      let store: TempStore;
      let rt: TestRuntime;
      let wallet: { id: string; address: Hex; data: string }[];
      const rpc = async (method: string, params: unknown[]) =>
        (await rt.post("/", { jsonrpc: "2.0", id: 1, method, params })).json as Envelope;

      beforeAll(async () => {
        token = softHsmToken(`cg-${target}`);
        store = await tempStore(target);
        rt = await startTestRuntime({
          store,
          env: { ...token.env, CHAINGATE_TRACKER_INTERVAL_MS: "100" },
        });
        const made = await rt.post("/wallet", { type: "PKCS11", address_quantity: 2 });
        expect(made.status, JSON.stringify(made.json)).toBe(200);
        wallet = made.json as typeof wallet;
      }, 120_000);
      afterAll(async () => {
        await rt?.close();
        await store?.drop();
        token?.remove();
      });

      it("makes its keys on the token, sensitive and never extractable; the record says where, never a secret", async () => {
        expect(wallet).toHaveLength(2);
        for (const [index, record] of wallet.entries()) {
          expect(record).toMatchObject({ type: "PKCS11", index });
          const data = JSON.parse(record.data) as { token: string; key_id: string; label: string };
          expect(data.token).toBe(token.label);
          expect(data.key_id).toMatch(/^[0-9a-f]+$/);
          expect(Object.keys(data).sort()).toEqual(["key_id", "label", "pkcs11", "token"]);
        }
        // The token's own view of the private keys.
        // The module is chaingate's too in this process: initialized already (and left so).
        const lib = new pkcs11js.PKCS11();
        lib.load(token.module);
        try {
          lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
        } catch (error) {
          if (!String(error).includes("CKR_CRYPTOKI_ALREADY_INITIALIZED")) throw error;
        }
        {
          const slot = lib
            .C_GetSlotList(true)
            .find((s) => lib.C_GetTokenInfo(s).label.trim() === token.label)!;
          const session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
          try {
            lib.C_Login(session, pkcs11js.CKU_USER, token.pin);
          } catch (error) {
            // Logged in already: the login is the process's, and chaingate's is.
            if (!String(error).includes("CKR_USER_ALREADY_LOGGED_IN")) throw error;
          }
          lib.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY }]);
          const keys = lib.C_FindObjects(session, 10);
          lib.C_FindObjectsFinal(session);
          expect(keys.length).toBe(2);
          for (const key of keys) {
            const [sensitive, extractable, onToken] = lib.C_GetAttributeValue(session, key, [
              { type: pkcs11js.CKA_SENSITIVE },
              { type: pkcs11js.CKA_EXTRACTABLE },
              { type: pkcs11js.CKA_TOKEN },
            ]);
            expect((sensitive!.value as Buffer)[0]).toBe(1);
            expect((extractable!.value as Buffer)[0]).toBe(0);
            expect((onToken!.value as Buffer)[0]).toBe(1);
          }
          lib.C_CloseSession(session);
        }
      });

      it("POST /transaction with no password: signed on the token, verified, mined", async () => {
        const sent = await rt.post("/transaction", {
          wallet_id: wallet[0]!.id,
          transaction: { to: DEV_ACCOUNT_2, value: "1000" },
        });
        expect(sent.status, JSON.stringify(sent.json)).toBe(200);
        const hash = (sent.json as { tx_hash: string }).tx_hash;
        expect((await nodeReceipt(nodeUrlOf(rt), hash)).status).toBe("0x1");
        const raw = (await nodeCall(nodeUrlOf(rt), "eth_getRawTransactionByHash", [hash])) as Hex;
        expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(
          wallet[0]!.address,
        );
      });

      it("the signer methods from an HSM address, through viem and ethers, with no unlock", async () => {
        const from = wallet[1]!.address;
        const client = createWalletClient({ chain: chainAt(rt.url), transport: http(rt.url), account: from });
        // eth_sendTransaction
        const hash = await client.sendTransaction({ to: DEV_ACCOUNT_2, value: 1n });
        expect((await nodeReceipt(nodeUrlOf(rt), hash)).status).toBe("0x1");
        // personal_sign and eth_signTypedData_v4
        const signature = await client.signMessage({ message: "from the token" });
        expect(await recoverMessageAddress({ message: "from the token", signature })).toBe(from);
        const typed = await client.signTypedData(TYPED);
        expect(await recoverTypedDataAddress({ ...TYPED, signature: typed })).toBe(from);
        // eth_signTransaction
        const signed = await rpc("eth_signTransaction", [
          {
            from,
            to: DEV_ACCOUNT_2,
            value: "0x1",
            gas: "0x5208",
            maxFeePerGas: "0xb2d05e00",
            maxPriorityFeePerGas: "0x1",
          },
        ]);
        expect(signed.error, JSON.stringify(signed.error)).toBeUndefined();
        expect(await recoverTransactionAddress({ serializedTransaction: signed.result as never })).toBe(from);
        expect(parseTransaction(signed.result as Hex).to).toBe(DEV_ACCOUNT_2.toLowerCase());
        // eth_sign through ethers' JsonRpcSigner, and a send
        const provider = new ethers.JsonRpcProvider(rt.url, 1001, { staticNetwork: true });
        const signer = await provider.getSigner(from);
        const text = await signer.signMessage("ethers asks the token");
        expect(ethers.verifyMessage("ethers asks the token", text)).toBe(from);
        const viaEthers = await signer.sendTransaction({ to: DEV_ACCOUNT_2, value: 2n });
        expect((await viaEthers.wait())?.status).toBe(1);
        // An EIP-7702 authorization signed on the token
        const authorization = await rpc("eth_signAuthorization", [from, { address: DEV_ACCOUNT_2 }]);
        expect(authorization.error, JSON.stringify(authorization.error)).toBeUndefined();
        provider.destroy();
      });

      it("web3.js and Foundry's cast send and sign from an HSM address", async () => {
        const from = wallet[1]!.address;
        const web3 = new Web3(rt.url);
        const receipt = await web3.eth.sendTransaction({ from, to: DEV_ACCOUNT_2, value: 5n });
        expect(receipt.status).toBe(1n);
        const signed = await web3.eth.sign(web3.utils.utf8ToHex("web3 asks the token"), from);
        expect(
          await recoverMessageAddress({
            message: "web3 asks the token",
            signature: signed as unknown as Hex,
          }),
        ).toBe(from);
        const out = await cast([
          "send",
          "--rpc-url",
          rt.url,
          "--unlocked",
          "--from",
          from,
          DEV_ACCOUNT_2,
          "--value",
          "7",
          "--json",
        ]);
        expect((JSON.parse(out) as { status: string }).status).toBe("0x1");
      });

      it("token operations and call bundles sign on the token too, with no password", async () => {
        const created = await ok(rt, "create_new_ERC20_token", {
          wallet_id: wallet[1]!.id,
          name: "Token Coin",
          symbol: "TOK",
          initial_supply: "1000",
        });
        expect((await nodeReceipt(nodeUrlOf(rt), created.tx_hash)).status).toBe("0x1");
        const bundle = await rpc("wallet_sendCalls", [
          {
            version: "2.0.0",
            chainId: "0x3e9",
            from: wallet[1]!.address,
            atomicRequired: false,
            calls: [
              { to: DEV_ACCOUNT_2, value: "0x1" },
              { to: DEV_ACCOUNT_2, value: "0x2" },
            ],
          },
        ]);
        expect(bundle.error, JSON.stringify(bundle.error)).toBeUndefined();
      });

      it("adopts a key already on the token by its label", async () => {
        keypairOnToken(token, "adopted", "a1");
        const adopted = await rt.post("/wallet", { type: "PKCS11", address_quantity: 1, keys: ["adopted"] });
        expect(adopted.status, JSON.stringify(adopted.json)).toBe(200);
        const [record] = adopted.json as { id: string; address: Hex; data: string }[];
        expect(JSON.parse(record!.data)).toMatchObject({ key_id: "a1", label: "adopted" });
        const signature = (await rpc("personal_sign", ["0x1234", record!.address])).result as Hex;
        expect(await recoverMessageAddress({ message: { raw: "0x1234" }, signature })).toBe(record!.address);
        const missing = await rt.post("/wallet", {
          type: "PKCS11",
          address_quantity: 1,
          keys: ["no-such-key"],
        });
        expect(missing.json).toMatchObject({ code: "HSM_KEY_NOT_FOUND" });
      });

      it("the token cut mid-burst and restored: HSM_UNAVAILABLE (retryable) meanwhile, /readyz names it, nothing signed twice, no nonce lost, back by itself", async () => {
        const from = wallet[0]!;
        const tokens = join(token.dir, "tokens");
        const away = join(token.dir, "tokens-away");
        const send = () =>
          rt.post("/transaction", { wallet_id: from.id, transaction: { to: DEV_ACCOUNT_2, value: "1" } });
        // More at once than the token has sessions (4): some wait for one when the token goes.
        const burst = (n = 3) => Promise.all(Array.from({ length: n }, send));
        const nonceBefore = Number(
          await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [from.address, "latest"]),
        );
        const answers = [...(await burst())];
        renameSync(tokens, away);
        let cut: { status: number; json: unknown }[];
        try {
          cut = await burst(8);
          for (const answer of cut) {
            if (answer.status === 200) continue;
            expect(answer.status, JSON.stringify(answer.json)).toBe(503);
            expect(answer.json).toMatchObject({ code: "HSM_UNAVAILABLE", retryable: true });
          }
          expect(cut.some((a) => a.status === 503)).toBe(true);
          const readyz = await fetch(`${rt.url}/readyz`);
          expect(readyz.status).toBe(503);
          expect(((await readyz.json()) as { problems: string[] }).problems.join(" ")).toContain(
            `PKCS#11 token "${token.label}"`,
          );
        } finally {
          renameSync(away, tokens);
        }
        answers.push(...cut);
        // Back by itself: the next retry of the token opens it again.
        expect(await waitUntil(async () => (await fetch(`${rt.url}/readyz`)).status === 200, 30_000)).toBe(
          true,
        );
        answers.push(...(await burst()));
        const sent = answers
          .filter((a) => a.status === 200)
          .map((a) => (a.json as { tx_hash: string }).tx_hash);
        expect(sent.length).toBeGreaterThanOrEqual(6);
        for (const hash of sent) expect((await nodeReceipt(nodeUrlOf(rt), hash)).status).toBe("0x1");
        // One transaction per answered send and none else: no nonce lost or used twice.
        const after = Number(
          await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [from.address, "latest"]),
        );
        expect(after - nonceBefore).toBe(sent.length);
      });

      it.skipIf(target !== "postgres")(
        "three instances on one PostgreSQL and one token sign for one HSM wallet: one contiguous nonce sequence",
        async () => {
          const from = wallet[1]!;
          const others = [
            await startTestRuntime({ store, env: { ...token.env, CHAINGATE_UPSTREAMS: nodeUrlOf(rt) } }),
            await startTestRuntime({ store, env: { ...token.env, CHAINGATE_UPSTREAMS: nodeUrlOf(rt) } }),
          ];
          try {
            const all = [rt, ...others];
            const before = Number(
              await nodeCall(nodeUrlOf(rt), "eth_getTransactionCount", [from.address, "latest"]),
            );
            const answers = await Promise.all(
              Array.from({ length: 9 }, (_, i) =>
                all[i % 3]!.post("/transaction", {
                  wallet_id: from.id,
                  transaction: { to: DEV_ACCOUNT_2, value: "3" },
                }),
              ),
            );
            for (const answer of answers) expect(answer.status, JSON.stringify(answer.json)).toBe(200);
            const hashes = answers.map((a) => (a.json as { tx_hash: string }).tx_hash);
            for (const hash of hashes) expect((await nodeReceipt(nodeUrlOf(rt), hash)).status).toBe("0x1");
            const nonces = await Promise.all(
              hashes.map(async (hash) =>
                Number(
                  ((await nodeCall(nodeUrlOf(rt), "eth_getTransactionByHash", [hash])) as { nonce: string })
                    .nonce,
                ),
              ),
            );
            // Contiguous, above what the chain had (payloads handed out earlier go first), none twice.
            const sorted = nonces.sort((a, b) => a - b);
            expect(sorted[0]).toBeGreaterThanOrEqual(before);
            expect(sorted).toEqual(Array.from({ length: 9 }, (_, i) => sorted[0]! + i));
          } finally {
            for (const other of others) await other.close();
          }
        },
      );

      it.skipIf(target !== "sqlite")(
        "the operator key on the token (--operator-key-pkcs11): chaingate's contracts deployed and the registry written by it",
        async () => {
          keypairOnToken(token, "operator");
          const operated = await startTestRuntime({
            env: { ...token.env, CHAINGATE_OPERATOR_KEY_PKCS11: "operator" },
          });
          try {
            expect(operated.system).toBeDefined();
            const operator = operated.system!.operator.address;
            const adopted = await operated.post("/wallet", {
              type: "PKCS11",
              address_quantity: 1,
              keys: ["operator"],
            });
            expect((adopted.json as { address: string }[])[0]!.address).toBe(operator);
            const member = await ok(operated, "register_new_member", {
              name: "Token Peer",
              chain_id: 1002,
              role: "AUDITOR",
            });
            expect(member).toBeDefined();
            // Every registry write came from the token's key: its nonce moved on both chains.
            expect(
              Number(await nodeCall(nodeUrlOf(operated), "eth_getTransactionCount", [operator, "latest"])),
            ).toBeGreaterThan(0);
          } finally {
            await operated.close();
          }
        },
      );

      it("no key material in the store: the records hold token references only", async () => {
        const rows = await rt.store.db.selectFrom("wallet_addresses").select("keystore").execute();
        for (const row of rows) expect(row.keystore.startsWith('{"pkcs11"')).toBe(true);
        const readyz = await fetch(`${rt.url}/readyz`);
        expect(readyz.status, await readyz.text()).toBe(200);
      });
    },
  );
