/** Consensus reads with three anvils of one chain, one behind a proxy that lies: `consensus=N`, `Chaingate-Consensus: N`, a chain's default, and each disagreement policy. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config/load-config.js";
import { upstreamTraitsOf } from "../rpc/method-table.js";
import { startChaingate } from "../runtime.js";
import { type Envelope, native, nodeCall } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import type { TestRuntime } from "../test-support/test-runtime.js";
import type { Chain } from "./chain-registry.js";
import { consensusRead } from "./consensus-read.js";
import { type DisagreementPolicy, UpstreamPool } from "./upstream-pool.js";

/** The balance the lying node claims for DEV_ACCOUNT_2. */
const LIE = "0x1";
/** A contract address whose code the lying node makes up. */
const EMPTY = "0x00000000000000000000000000000000000c0de5";

const own = ownNodes("consensus-reads");

describe("consensus reads over three upstreams, one lying", () => {
  let liar: RpcProxy;
  let honest: string[];
  let lying = true;
  let rt: TestRuntime;

  beforeAll(async () => {
    const [a, b, c] = await Promise.all([own.anvil("a"), own.anvil("b"), own.anvil("c")]);
    honest = [a.url, b.url];
    liar = await startRpcProxy(c.url, undefined, (call, answer) => {
      if (!lying) return answer;
      if (
        call.method === "eth_getBalance" &&
        String(call.params[0]).toLowerCase() === DEV_ACCOUNT_2.toLowerCase()
      )
        return { result: LIE };
      if (call.method === "eth_getCode" && String(call.params[0]).toLowerCase() === EMPTY)
        return { result: "0x60006000" };
      return answer;
    });
    const config = join(own.dir, "chains.json");
    writeFileSync(
      config,
      JSON.stringify({
        chains: [
          {
            chainId: 1001,
            upstreams: [{ url: a.url }, { url: b.url }, { url: liar.url }],
            hedge: false,
            consensus: { methods: { eth_getCode: 3 } },
          },
        ],
      }),
    );
    rt = await own.runtime({ env: { CHAINGATE_CONFIG: config } });
  }, 120_000);
  afterAll(async () => {
    await liar?.close();
  });

  const balanceOn = (url: string) => nodeCall(url, "eth_getBalance", [DEV_ACCOUNT_2, "latest"]);

  it("consensus=3 on a Native path: the liar's answer is named beside the honest ones, and nothing is answered as agreed", async () => {
    const answer = await native(rt, "eth_getBalance", [DEV_ACCOUNT_2, "latest"], "?consensus=3");
    expect(answer.result).toBeUndefined();
    const data = answer.error?.data as { code: string; upstreams: { upstream: string; said: string }[] };
    expect(data.code, JSON.stringify(answer)).toBe("UPSTREAMS_DISAGREE");
    expect(data.upstreams).toHaveLength(3);
    const truth = (await balanceOn(honest[0]!)) as string;
    expect(data.upstreams.filter((u) => u.said === JSON.stringify(truth.toLowerCase()))).toHaveLength(2);
    expect(data.upstreams.filter((u) => u.said === JSON.stringify(LIE))).toHaveLength(1);
  });

  it("consensus=3 while every upstream tells the truth answers the agreed value, asking each once", async () => {
    lying = false;
    try {
      liar.reset();
      const answer = await native(rt, "eth_getBalance", [DEV_ACCOUNT_2, "latest"], "?consensus=3");
      expect(answer.result).toBe(await balanceOn(honest[1]!));
      expect(liar.counts.get("eth_getBalance")).toBe(1);
    } finally {
      lying = true;
    }
  });

  it("the Chaingate-Consensus header on POST / covers each read of a batch; a call that is no read is answered as without it", async () => {
    const { json } = await rt.post(
      "/",
      [
        { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [DEV_ACCOUNT_2, "latest"] },
        { jsonrpc: "2.0", id: 2, method: "eth_getTransactionCount", params: [DEV_ACCOUNT_2, "latest"] },
        { jsonrpc: "2.0", id: 3, method: "eth_newBlockFilter", params: [] },
      ],
      { "chaingate-consensus": "3" },
    );
    const [balance, count, filter] = json as Envelope[];
    expect((balance!.error?.data as { code?: string } | undefined)?.code).toBe("UPSTREAMS_DISAGREE");
    expect(count!.result).toBe(
      await nodeCall(honest[0]!, "eth_getTransactionCount", [DEV_ACCOUNT_2, "latest"]),
    );
    expect(filter!.result).toMatch(/^0x[0-9a-f]+$/);
  });

  it("a chain's default consensus applies without asking, and is never answered from the cache", async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await native(rt, "eth_getCode", [EMPTY, "latest"]);
      expect((answer.error?.data as { code: string } | undefined)?.code, JSON.stringify(answer)).toBe(
        "UPSTREAMS_DISAGREE",
      );
    }
    lying = false;
    try {
      expect((await native(rt, "eth_getCode", [EMPTY, "latest"])).result).toBe("0x");
    } finally {
      lying = true;
    }
  });

  it("a consensus that cannot be met or asked is refused with INVALID_CONSENSUS", async () => {
    const refusals: [string, string, unknown[]][] = [
      ["eth_getBalance", "?consensus=0", [DEV_ACCOUNT_2, "latest"]],
      ["eth_getBalance", "?consensus=two", [DEV_ACCOUNT_2, "latest"]],
      ["eth_getBalance", "?consensus=4", [DEV_ACCOUNT_2, "latest"]],
      ["eth_sendRawTransaction", "?consensus=2", ["0x02"]],
      ["eth_getLogs", "?consensus=2", [{ fromBlock: "0x0", toBlock: "0x0" }]],
    ];
    for (const [method, query, params] of refusals) {
      const answer = await native(rt, method, params, query);
      expect((answer.error?.data as { code: string } | undefined)?.code, `${method}${query}`).toBe(
        "INVALID_CONSENSUS",
      );
    }
    const { json } = await rt.post(
      "/",
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      { "chaingate-consensus": "many" },
    );
    expect(((json as Envelope).error?.data as { code?: string } | undefined)?.code).toBe("INVALID_CONSENSUS");
  });
});

describe("a disagreement answered by the chain's policy", () => {
  let nodes: string[];
  const chainWith = (urls: string[], policy: DisagreementPolicy): Chain => ({
    chainId: 1001,
    name: "policy",
    pool: new UpstreamPool(1001, urls, 5_000, upstreamTraitsOf, {
      consensus: { methods: new Map(), onDisagreement: policy },
    }),
  });

  beforeAll(async () => {
    const started = await Promise.all([own.anvil("p1"), own.anvil("p2"), own.anvil("p3")]);
    nodes = started.map((n) => n.url);
    // The third node is a block ahead, and in that block DEV_ACCOUNT_2's balance changed.
    await nodeCall(nodes[2]!, "anvil_setBalance", [DEV_ACCOUNT_2, toHex(7n)]);
    await nodeCall(nodes[2]!, "evm_mine", []);
  }, 120_000);

  const read = { method: "eth_getBalance", params: [DEV_ACCOUNT_2, "latest"] };

  it("majority: two of three agree, so theirs is the answer", async () => {
    const chain = chainWith(nodes, "majority");
    const truth = await nodeCall(nodes[0]!, "eth_getBalance", [DEV_ACCOUNT_2, "latest"]);
    // Whichever two are asked first, a disagreement asks the third and the two alike win.
    for (let i = 0; i < 3; i++) expect(await consensusRead(chain, read, 2, "majority")).toBe(truth);
    await chain.pool.close();
  });

  it("majority with no majority is still a disagreement", async () => {
    const chain = chainWith([nodes[0]!, nodes[2]!], "majority");
    await expect(consensusRead(chain, read, 2, "majority")).rejects.toMatchObject({
      code: "UPSTREAMS_DISAGREE",
    });
    await chain.pool.close();
  });

  it("highest_block: the upstream with the highest head answers", async () => {
    const chain = chainWith([nodes[0]!, nodes[2]!], "highest_block");
    await chain.pool.pollHeads();
    expect(await consensusRead(chain, read, 2, "highest_block")).toBe(toHex(7n));
    await chain.pool.close();
  });

  it("error: the answer names what each upstream said", async () => {
    const chain = chainWith([nodes[0]!, nodes[2]!], "error");
    await expect(consensusRead(chain, read, 2, "error")).rejects.toThrow(/0x7/);
    await chain.pool.close();
  });
});

describe("a chain's consensus in the config file", () => {
  const withChains = (chains: unknown) => {
    const file = join(own.dir, "consensus-config.json");
    writeFileSync(file, JSON.stringify({ chains }));
    return { env: { CHAINGATE_CONFIG: file } };
  };
  const upstreams = [{ url: "http://127.0.0.1:1" }, { url: "http://127.0.0.1:2" }];

  it("bad shapes are named, each", () => {
    let problems: readonly string[] = [];
    try {
      loadConfig(
        withChains([
          {
            chainId: 7,
            upstreams,
            consensus: { methods: { eth_getBalance: 3, "not a method": 2 }, onDisagreement: "loudest", x: 1 },
          },
        ]),
      );
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems.join("\n")).toMatch(
      /methods\.eth_getBalance must be a whole number from 1 to the chain's 2/,
    );
    expect(problems.join("\n")).toMatch(/"not a method" is not a method name/);
    expect(problems.join("\n")).toMatch(/got onDisagreement "loudest"/);
    expect(problems.join("\n")).toMatch(/unknown key "x"/);
  });

  it("a method that is no plain read stops the start, named", async () => {
    const config = loadConfig(
      withChains([{ chainId: 7, upstreams, consensus: { methods: { eth_sendRawTransaction: 2 } } }]),
    );
    await expect(startChaingate(config, { listen: false })).rejects.toThrow(ConfigError);
    await expect(startChaingate(config, { listen: false })).rejects.toThrow(
      /chains\[0\]\.consensus\.methods\.eth_sendRawTransaction: it is not a plain node read/,
    );
  });
});
