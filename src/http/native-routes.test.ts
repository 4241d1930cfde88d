import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METHODS } from "../rpc/method-table.js";
import { native, type Receipt, result, sendAndWait } from "../test-support/chain-helpers.js";
import {
  DEV_ACCOUNT,
  EMITTER_INIT_CODE,
  EMITTER_TOPIC,
  REVERTER_INIT_CODE,
  signedDevTransfer,
} from "../test-support/evm-fixtures.js";
import { openRpcValidator } from "../test-support/openrpc.js";
import { specCalls } from "../test-support/spec-calls.js";
import { startTestRuntime, suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const SPEC_PATHS = [
  "eth_accounts",
  "eth_blockNumber",
  "eth_gasPrice",
  "eth_newBlockFilter",
  "eth_newPendingTransactionFilter",
  "eth_protocolVersion",
  "eth_syncing",
  "eth_call",
  "eth_estimateGas",
  "eth_getBalance",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getCode",
  "eth_getFilterChanges",
  "eth_getFilterLogs",
  "eth_getLogs",
  "eth_getStorageAt",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByHash",
  "eth_getTransactionCount",
  "eth_getTransactionReceipt",
  "eth_getUncleByBlockHashAndIndex",
  "eth_getUncleByBlockNumberAndIndex",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
  "eth_newFilter",
  "eth_sendRawTransaction",
  "eth_sendTransaction",
  "eth_sign",
  "eth_uninstallFilter",
];

describe("Native paths against the embedded chain", () => {
  let rt: TestRuntime;
  let emitter: string;
  let reverter: string;
  let emit: Receipt;
  let logFilter: string;
  const openrpc = openRpcValidator();

  beforeAll(async () => {
    rt = await startTestRuntime();
    emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE })).contractAddress!;
    reverter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: REVERTER_INIT_CODE })).contractAddress!;
    logFilter = await result<string>(rt, "eth_newFilter", [{ address: emitter, topics: [EMITTER_TOPIC] }]);
    emit = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("the method table has exactly the spec's 33 Native methods marked inSpec", () => {
    const inSpec = METHODS.filter((m) => m.inSpec).map((m) => m.name);
    expect(inSpec.sort()).toEqual([...SPEC_PATHS].sort());
    expect(inSpec).toHaveLength(33);
  });

  it("every one of the 33 paths answers HTTP 200 with the node's result, valid against the standard", async () => {
    const blockHash = emit.blockHash;
    const filterForUninstall = await result<string>(rt, "eth_newBlockFilter");
    const pendingNonce = await result<string>(rt, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]);
    const raw = await signedDevTransfer(Number(pendingNonce));
    // eth_accounts, eth_sign and eth_sendTransaction answer from a custody wallet, unlocked for the call.
    const created = await rt.post("/wallet", {
      type: "KEYSTORE_V3",
      password: "native-pw",
      address_quantity: 1,
    });
    const custody = (created.json as { address: string }[])[0]!.address;
    expect((await native(rt, "personal_unlockAccount", [custody, "native-pw", 600])).result).toBe(true);
    const calls = specCalls({ emitter, logFilter, filterForUninstall, emit, raw, custody });
    expect(Object.keys(calls).sort()).toEqual([...SPEC_PATHS].sort());

    const results: Record<string, unknown> = {};
    for (const method of SPEC_PATHS) {
      const envelope = await native(rt, method, calls[method]);
      expect(envelope.jsonrpc, method).toBe("2.0");
      expect(envelope.id, method).toBe(1);
      expect(envelope.error, `${method}: ${JSON.stringify(envelope.error)}`).toBeUndefined();
      expect("result" in envelope, method).toBe(true);
      results[method] = envelope.result;
      if (openrpc.has(method)) {
        expect(
          openrpc.check(method, envelope.result),
          `${method} result vs OpenRPC: ${JSON.stringify(envelope.result)}`,
        ).toBeNull();
      }
    }

    expect(results.eth_blockNumber).toMatch(/^0x[0-9a-f]+$/);
    expect(results.eth_syncing).toBe(false);
    expect(results.eth_accounts).toContain(custody);
    expect(results.eth_accounts).not.toContain(DEV_ACCOUNT.toLowerCase());
    expect((results.eth_getBlockByHash as { hash: string }).hash).toBe(blockHash);
    expect((results.eth_getBlockByNumber as { transactions: { hash: string }[] }).transactions[0]?.hash).toBe(
      emit.transactionHash,
    );
    expect(results.eth_getBlockTransactionCountByHash).toBe("0x1");
    expect(results.eth_getCode).toMatch(/^0x7f/);
    const changes = results.eth_getFilterChanges as { transactionHash: string; topics: string[] }[];
    expect(changes.map((l) => l.transactionHash)).toEqual([emit.transactionHash]);
    expect(changes[0]?.topics).toEqual([EMITTER_TOPIC]);
    expect((results.eth_getLogs as unknown[]).length).toBeGreaterThanOrEqual(1);
    expect((results.eth_getTransactionByHash as { hash: string }).hash).toBe(emit.transactionHash);
    expect((results.eth_getTransactionReceipt as Receipt).status).toBe("0x1");
    expect(results.eth_getUncleByBlockHashAndIndex).toBeNull();
    expect(results.eth_getUncleCountByBlockNumber).toBe("0x0");
    expect(results.eth_sendRawTransaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(results.eth_sign).toMatch(/^0x[0-9a-f]{130}$/);
    expect(results.eth_uninstallFilter).toBe(true);
    expect(results.eth_newFilter).toMatch(/^0x[1-9a-f][0-9a-f]{0,31}$/);
  });

  it("the 7 no-body paths work with no body, an empty body, or an envelope, with or without content-type", async () => {
    for (const method of [
      "eth_blockNumber",
      "eth_gasPrice",
      "eth_accounts",
      "eth_protocolVersion",
      "eth_syncing",
    ]) {
      for (const init of [
        {},
        { body: "" },
        { headers: { "content-type": "application/json" } },
        { headers: { "content-type": "application/json" }, body: '{"id":42}' },
        { body: '{"jsonrpc":"2.0","id":42,"method":"/eth_call","params":[]}' },
      ] as RequestInit[]) {
        const response = await fetch(`${rt.url}/${method}`, { method: "POST", ...init });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { id: unknown; result: unknown; error?: unknown };
        expect(body.error).toBeUndefined();
        expect(body.id).toBe(typeof init.body === "string" && init.body.includes("42") ? 42 : 1);
      }
    }
  });

  it("the path names the method: a mismatching method field in the body is ignored", async () => {
    const { json } = await rt.post("/eth_getBalance", {
      jsonrpc: "2.0",
      id: 9,
      method: "/eth_getTransactionCount",
      params: [DEV_ACCOUNT, "latest"],
    });
    expect((json as { result: string }).result).toMatch(/^0x[0-9a-f]{10,}$/);
  });

  it("a revert comes back as the node's error with its data", async () => {
    const envelope = await native(rt, "eth_call", [{ to: reverter }, "latest"]);
    expect(envelope.error?.code).toBe(3);
    expect(envelope.error?.data).toBe("0xdeadbeef");
    expect(envelope.error?.message).toMatch(/revert/i);
  });

  it("selects the peer chain with ?chain_id or X-Chain-Id", async () => {
    expect(await result(rt, "eth_chainId", [], "?chain_id=1002")).toBe("0x3ea");
    const { json } = await rt.post("/eth_chainId", {}, { "x-chain-id": "0x3ea" });
    expect((json as { result: string }).result).toBe("0x3ea");
    const unknown = await native(rt, "eth_chainId", [], "?chain_id=5");
    expect(unknown.error?.code).toBe(-32600);
    expect(unknown.error?.message).toMatch(/Unknown chain: 5/);
  });

  it("serves the OpenAPI 3.1 document with every Native path, and a docs page", async () => {
    const doc = (await (await fetch(`${rt.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, { post?: { requestBody?: unknown } }>;
    };
    expect(doc.openapi).toBe("3.1.0");
    for (const method of SPEC_PATHS) expect(doc.paths[`/${method}`]?.post, method).toBeDefined();
    expect(doc.paths["/"]?.post).toBeDefined();
    const docs = await fetch(`${rt.url}/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/text\/html/);
  });

  it("reports readiness from eth_syncing and liveness", async () => {
    const ready = (await (await fetch(`${rt.url}/readyz`)).json()) as { synced: boolean; chains: unknown[] };
    expect(ready.synced).toBe(true);
    expect(ready.chains).toHaveLength(2);
    const live = (await (await fetch(`${rt.url}/healthz`)).json()) as { status: string };
    expect(live.status).toBe("ok");
  });
});

describe("near misses", () => {
  const rt = suiteRuntime();

  it("a method path with a case typo names the method it meant; GET on a method path says method paths take POST", async () => {
    const typo = await rt.post("/eth_blocknumber");
    expect(typo.status).toBe(200);
    expect(typo.json).toMatchObject({
      error: { code: -32601, message: "Method not found: /eth_blocknumber (did you mean /eth_blockNumber?)" },
    });
    const get = await fetch(`${rt.url}/eth_blockNumber`);
    expect(get.status).toBe(404);
    expect(((await get.json()) as { detail: string }).detail).toBe(
      "No route GET /eth_blockNumber: method paths take POST (POST /eth_blockNumber)",
    );
    const near = await fetch(`${rt.url}/eth_chianId`);
    expect(((await near.json()) as { detail: string }).detail).toMatch(
      /POST \/eth_chainId, the nearest method/,
    );
    const far = await fetch(`${rt.url}/nothing-like-it`);
    expect(((await far.json()) as { detail: string }).detail).toBe("No route GET /nothing-like-it");
  });

  it("an unknown chain_id lists the configured chains", async () => {
    const unknown = await rt.post("/eth_chainId?chain_id=999");
    expect(JSON.stringify(unknown.json)).toContain(
      "Unknown chain: 999 is not configured (configured: 1001, 1002)",
    );
  });
});
