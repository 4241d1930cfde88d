import { type Abi, parseEther, toFunctionSelector, toHex } from "viem";
import { expect, it } from "vitest";
import { BridgeERC20 } from "../contracts/artifacts.generated.js";
import { nodeCall } from "../test-support/chain-helpers.js";
import { DEV_PRIVATE_KEY } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { startRpcProxy } from "../test-support/rpc-proxy.js";
import { newWallet, ok, PASSWORD, peerAndCoin, read, waitFor } from "../test-support/token-helpers.js";

const own = ownNodes("delivery-refusal");
const RECIPIENT = "0x000000000000000000000000000000000000d00d";
const DELIVER = toFunctionSelector("deliver(bytes32,uint256,uint8,address,address,bytes)");

it("a delivery the destination refuses for a reason that is not a revert stops after its attempts and is refunded", async () => {
  const a = await own.anvil("a", { chainId: 1001 });
  const b = await own.anvil("b", { chainId: 1002 });
  // The destination's EVM cannot run the delivery (as a Cancun contract on a Shanghai chain would
  // fail): every estimate of `deliver` is refused with an invalid opcode, which no retry changes.
  let refusals = 0;
  const destination = await startRpcProxy(b.url, undefined, (call, answer) => {
    const tx = call.params[0] as { data?: string } | undefined;
    if (call.method !== "eth_estimateGas" || !tx?.data?.startsWith(DELIVER)) return answer;
    refusals++;
    return { error: { code: -32000, message: "invalid opcode: opcode 0x5e not defined" } };
  });
  const config = own.configFile({
    homeChainId: 1001,
    chains: [
      { chainId: 1001, upstreams: [{ url: a.url }], finality: 1 },
      { chainId: 1002, upstreams: [{ url: destination.url }], finality: 1 },
    ],
  });
  const rt = await own.runtime({
    deploy: true,
    env: {
      CHAINGATE_CONFIG: config,
      CHAINGATE_OPERATOR_KEY: DEV_PRIVATE_KEY,
      CHAINGATE_RELAYER_INTERVAL_MS: "100",
      CHAINGATE_TRACKER_INTERVAL_MS: "100",
    },
  });
  try {
    const alice = await newWallet(rt);
    await nodeCall(a.url, "anvil_setBalance", [alice.address, toHex(parseEther("10"))]);
    const token = await peerAndCoin(rt, alice.id, {
      role: "PARTICIPANT",
      member: "Old EVM",
      name: "Stuck Coin",
      symbol: "STK",
      supply: "100",
    });
    const sent = await ok(rt, "trasport_token", {
      wallet_id: alice.id,
      password: PASSWORD,
      token,
      to: RECIPIENT,
      amount: "40",
      destination_chain_id: 1002,
    });
    const erc20 = BridgeERC20.abi as Abi;
    const refunded = await waitFor(
      "the refund",
      async () => {
        const { transports } = await ok<{
          transports: { id: string; state: string; error: string; refund_state: string }[];
        }>(rt, "list_all_transports", {});
        const row = transports.find((t) => t.id === sent.transport_id);
        return row?.refund_state === "done" ? row : undefined;
      },
      60_000,
    );
    expect(refunded.state).toBe("failed");
    expect(refunded.error).toMatch(/delivery refused 5 times: .*invalid opcode/);
    expect(refusals).toBe(5);
    expect(await read(rt, 1001, token, erc20, "balanceOf", [alice.address])).toBe(100n);
  } finally {
    await destination.close();
  }
}, 120_000);
