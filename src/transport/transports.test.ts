import { type Abi, type Hex, toFunctionSelector } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BridgeERC20, BridgeERC721, TransportProbe } from "../contracts/artifacts.generated.js";
import { receiptOf } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import {
  deliveries,
  newWallet,
  ok,
  op,
  PASSWORD,
  read,
  settled,
  transport,
} from "../test-support/token-helpers.js";
import { type Receiver, startReceiver } from "../test-support/webhook-receiver.js";

const ERC20 = BridgeERC20.abi as Abi;
const ERC721 = BridgeERC721.abi as Abi;
const PROBE = TransportProbe.abi as Abi;
const RECIPIENT_1002 = "0x000000000000000000000000000000000000bEEF";

/** Transports recorded, all kinds and states. */
async function transportCount(rt: TestRuntime): Promise<number> {
  const row = await rt.store.db
    .selectFrom("transports")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describeEachStore("members, tokens and transports on the embedded chains 1001 and 1002", (target) => {
  let rt: TestRuntime;
  let alice: { id: string; address: Hex };
  let mallory: { id: string; address: Hex };
  let receiver: Receiver;
  const signer = () => ({ wallet_id: alice.id, password: PASSWORD });

  beforeAll(async () => {
    rt = await startTestRuntime({
      store: target,
      env: {
        CHAINGATE_TRACKER_INTERVAL_MS: "100",
        CHAINGATE_RELAYER_INTERVAL_MS: "100",
        CHAINGATE_WEBHOOK_ALLOW_PRIVATE: "true",
        CHAINGATE_WEBHOOK_INTERVAL_MS: "50",
      },
    });
    alice = await newWallet(rt);
    mallory = await newWallet(rt);
    receiver = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await rt?.close();
    await receiver?.down();
  });

  it("registers members in the on-chain registry and lists them; refuses duplicates and unknown chains", async () => {
    const home = await ok(rt, "register_new_member", {
      name: "Home Bank",
      chain_id: 1001,
      role: "PARTICIPANT",
    });
    expect(home).toMatchObject({
      id: 1,
      name: "Home Bank",
      chain_id: 1001,
      role: "PARTICIPANT",
      status: "ACTIVE",
    });
    expect(home.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await receiptOf(rt, home.tx_hash as string)).status).toBe("0x1");

    const duplicate = await op(rt, "register_new_member", {
      name: "Home Bank",
      chain_id: 1002,
      role: "ISSUER",
    });
    expect(duplicate.error?.data?.code).toBe("MEMBER_NAME_TAKEN");
    const unknown = await op(rt, "register_new_member", { name: "Nowhere", chain_id: 4242, role: "ISSUER" });
    expect(unknown.error?.data?.code).toBe("UNKNOWN_CHAIN");
    const badRole = await op(rt, "register_new_member", { name: "X", chain_id: 1001, role: "KING" });
    expect(badRole.error?.code).toBe(-32602);
    expect(badRole.error?.message).toContain("role");

    const members = await ok<{ name: string; tx_hash: string }[]>(rt, "list_all_members", {});
    expect(members.map((m) => m.name)).toEqual(["Home Bank"]);
    expect(members[0]!.tx_hash).toBe(home.tx_hash);
  });

  it("creates an ERC20 and transfers on one chain; a transport to a chain with no member is refused", async () => {
    const token = await ok(rt, "create_new_ERC20_token", {
      ...signer(),
      name: "Gate Coin",
      symbol: "GATE",
      initial_supply: "1000000",
    });
    expect(token).toMatchObject({ chain_id: 1001, standard: "ERC20", owner: alice.address });
    await receiptOf(rt, token.tx_hash as string);
    expect(await read(rt, 1001, token.address as string, ERC20, "balanceOf", [alice.address])).toBe(
      1_000_000n,
    );
    expect(await read(rt, 1001, token.address as string, ERC20, "owner")).toBe(alice.address);

    const sent = await ok(rt, "transfer_tokens", {
      ...signer(),
      token: token.address,
      to: DEV_ACCOUNT_2,
      amount: 10,
    });
    await receiptOf(rt, sent.tx_hash as string);
    expect(await read(rt, 1001, token.address as string, ERC20, "balanceOf", [DEV_ACCOUNT_2])).toBe(10n);

    const noMember = await op(rt, "trasport_token", {
      ...signer(),
      token: token.address,
      to: RECIPIENT_1002,
      amount: "250",
      destination_chain_id: 1002,
    });
    expect(noMember.error?.data?.code).toBe("DESTINATION_NOT_MEMBER");
    const unconfigured = await op(rt, "trasport_token", {
      ...signer(),
      token: token.address,
      to: RECIPIENT_1002,
      amount: "250",
      destination_chain_id: 1003,
    });
    expect(unconfigured.error?.data?.code).toBe("UNKNOWN_CHAIN");
    expect(await read(rt, 1001, token.address as string, ERC20, "balanceOf", [alice.address])).toBe(999_990n);

    // list_all_transfers shows the token operations with their details.
    const { transfers } = await ok<{ transfers: { kind: string; details: Record<string, unknown> }[] }>(
      rt,
      "list_all_transfers",
      { kind: "transfer_tokens" },
    );
    expect(transfers[0]?.details).toMatchObject({ token: token.address, amount: "10", standard: "ERC20" });

    // Under an Idempotency-Key, a retry replays the first answer, and only for the wallet's password.
    // To herself: the balances the rest of this test reads stay as they are.
    const keyed = { ...signer(), token: token.address, to: alice.address, amount: 1 };
    const key = { "Idempotency-Key": `tokens-${token.address}` };
    const once = await op(rt, "transfer_tokens", keyed, key);
    expect((await op(rt, "transfer_tokens", keyed, key)).result).toEqual(once.result);
    const guessed = await op(rt, "transfer_tokens", { ...keyed, password: "a guess" }, key);
    expect(guessed.result).toBeUndefined();
    expect(guessed.error?.data?.code).toBe("WRONG_PASSWORD");
    await receiptOf(rt, (once.result as { tx_hash: string }).tx_hash);
  });

  it("transports 250 of an ERC20 to chain 1002: minted there once, burned here, supply unchanged", async () => {
    await ok(rt, "register_new_member", { name: "Peer Bank", chain_id: 1002, role: "ISSUER" });
    const token = await ok(rt, "create_new_ERC20_token", {
      ...signer(),
      name: "Bridge Coin",
      symbol: "BRG",
      initial_supply: 1_000_000,
    });
    await receiptOf(rt, token.tx_hash as string);
    const address = token.address as string;

    const tooMuch = await op(rt, "trasport_token", {
      ...signer(),
      token: address,
      to: RECIPIENT_1002,
      amount: "1000001",
      destination_chain_id: 1002,
    });
    expect(tooMuch.error?.data?.code).toBe("INSUFFICIENT_TOKEN_BALANCE");
    expect(tooMuch.error?.message).toMatch(/1000001.*1000000/);

    // A policy on the wallet judges a transport by its recipient and its ERC20 amount.
    const hook = await rt.post("/webhooks", { url: receiver.url, events: ["transport.*"] });
    expect(hook.status).toBe(200);
    const policy = await rt.post("/policies", {
      name: "bridge",
      wallet_id: alice.id,
      rules: { recipients: [RECIPIENT_1002], tokens: [{ token: address, max_per_tx: "250" }] },
    });
    expect(policy.status, JSON.stringify(policy.json)).toBe(200);
    const transportTo = (to: string, amount: string) =>
      op(rt, "trasport_token", { ...signer(), token: address, to, amount, destination_chain_id: 1002 });
    expect((await transportTo(RECIPIENT_1002, "251")).error?.data).toMatchObject({
      code: "POLICY_DENIED",
      rule: "tokens.max_per_tx",
    });
    expect((await transportTo(DEV_ACCOUNT_2, "1")).error?.data).toMatchObject({
      code: "POLICY_DENIED",
      rule: "recipients",
    });

    const sent = await ok(rt, "trasport_token", {
      ...signer(),
      token: address,
      to: RECIPIENT_1002,
      amount: "250",
      destination_chain_id: 1002,
    });
    expect(sent).toMatchObject({
      state: "sent",
      kind: "ERC20",
      source_chain_id: 1001,
      destination_chain_id: 1002,
    });
    const done = await settled(rt, sent.transport_id as string);
    expect(done).toMatchObject({
      state: "delivered",
      amount: "250",
      source_tx_hash: sent.tx_hash,
      error: null,
    });
    expect((await receiptOf(rt, done.destination_tx_hash!, "?chain_id=1002")).status).toBe("0x1");

    expect(await read(rt, 1002, address, ERC20, "balanceOf", [RECIPIENT_1002])).toBe(250n);
    expect(await read(rt, 1001, address, ERC20, "balanceOf", [alice.address])).toBe(999_750n);
    const supply1001 = (await read(rt, 1001, address, ERC20, "totalSupply")) as bigint;
    const supply1002 = (await read(rt, 1002, address, ERC20, "totalSupply")) as bigint;
    expect(supply1001 + supply1002).toBe(1_000_000n);
    expect(await read(rt, 1002, address, ERC20, "symbol")).toBe("BRG");
    expect(await deliveries(rt, sent.transport_id as string)).toBe(1);
    // Nothing was attempted for the refused transports.
    const { transports } = await ok<{ transports: unknown[] }>(rt, "list_all_transports", { kind: "ERC20" });
    expect(transports).toHaveLength(1);
    // Its webhook heard each state once, in order.
    const ofTransport = () => receiver.deliveries.filter((d) => d.body.data.id === sent.transport_id);
    expect(
      await waitUntil(() => ofTransport().some((d) => d.body.type === "transport.delivered"), 60_000),
    ).toBe(true);
    expect(ofTransport().map((d) => d.body.type)).toEqual([
      "transport.sent",
      "transport.delivering",
      "transport.delivered",
    ]);
    await fetch(`${rt.url}/policies/${(policy.json as { id: string }).id}`, { method: "DELETE" });
  });

  it("transports an ERC721 token id; a non-owner cannot move or transport it", async () => {
    const nft = await ok(rt, "create_new_ERC721_token", {
      ...signer(),
      name: "Gate Art",
      symbol: "GART",
      base_uri: "ipfs://x/",
      mint: [1, "2"],
    });
    await receiptOf(rt, nft.tx_hash as string);
    const address = nft.address as string;
    expect(await read(rt, 1001, address, ERC721, "ownerOf", [2n])).toBe(alice.address);

    const stolen = await op(rt, "trasport_token", {
      wallet_id: mallory.id,
      password: PASSWORD,
      token: address,
      to: mallory.address,
      token_id: 2,
      destination_chain_id: 1002,
    });
    expect(stolen.error?.data?.code).toBe("NOT_TOKEN_OWNER");
    const moved = await op(rt, "transfer_tokens", {
      wallet_id: mallory.id,
      password: PASSWORD,
      token: address,
      to: mallory.address,
      token_id: "2",
    });
    expect(moved.error?.data?.code).toBe("NOT_TOKEN_OWNER");
    const wrongShape = await op(rt, "trasport_token", {
      ...signer(),
      token: address,
      to: RECIPIENT_1002,
      amount: 1,
      destination_chain_id: 1002,
    });
    expect(wrongShape.error?.code).toBe(-32602);
    expect(await read(rt, 1001, address, ERC721, "ownerOf", [2n])).toBe(alice.address);

    const sent = await ok(rt, "trasport_token", {
      ...signer(),
      token: address,
      to: RECIPIENT_1002,
      token_id: "1",
      destination_chain_id: 1002,
    });
    const done = await settled(rt, sent.transport_id as string);
    expect(done).toMatchObject({ state: "delivered", kind: "ERC721", token_id: "1" });
    expect(await read(rt, 1002, address, ERC721, "ownerOf", [1n])).toBe(RECIPIENT_1002);
    expect(await read(rt, 1002, address, ERC721, "tokenURI", [1n])).toBe("ipfs://x/1");
    await expect(read(rt, 1001, address, ERC721, "ownerOf", [1n])).rejects.toThrow(
      /ERC721NonexistentToken|revert/,
    );
  });

  it("delivers a message to a receiver contract on 1002 exactly once, and calls back for tokens with data", async () => {
    const deployed = await ok(rt, "deploy_new_contract", {
      ...signer(),
      chain_id: 1002,
      bytecode: TransportProbe.bytecode,
    });
    expect(
      (await receiptOf(rt, deployed.tx_hash as string, "?chain_id=1002")).contractAddress?.toLowerCase(),
    ).toBe((deployed.address as string).toLowerCase());
    const probe = deployed.address as string;

    const message = await ok(rt, "transport_arbitrary_message", {
      ...signer(),
      destination_chain_id: 1002,
      destination: probe,
      payload: "0xc0ffee",
    });
    expect((await settled(rt, message.transport_id as string)).state).toBe("delivered");
    expect(await read(rt, 1002, probe, PROBE, "messages")).toBe(1n);
    expect(await read(rt, 1002, probe, PROBE, "lastPayload")).toBe("0xc0ffee");
    expect(await read(rt, 1002, probe, PROBE, "lastSender")).toBe(alice.address);

    const token = await ok(rt, "create_new_ERC20_token", {
      ...signer(),
      name: "Data Coin",
      symbol: "DAT",
      decimals: 6,
      initial_supply: 100,
    });
    await receiptOf(rt, token.tx_hash as string);
    const withData = await ok(rt, "transport_token_with_data", {
      ...signer(),
      token: token.address,
      to: probe,
      amount: 5,
      destination_chain_id: 1002,
      data: "0xbeef",
    });
    expect((await settled(rt, withData.transport_id as string)).state).toBe("delivered");
    expect(await read(rt, 1002, probe, PROBE, "tokenCallbacks")).toBe(1n);
    expect(await read(rt, 1002, probe, PROBE, "lastPayload")).toBe("0xbeef");
    expect(await read(rt, 1002, token.address as string, ERC20, "balanceOf", [probe])).toBe(5n);
    expect(await read(rt, 1002, token.address as string, ERC20, "decimals")).toBe(6);

    // More relayer passes change nothing: each message ran once.
    await new Promise((r) => setTimeout(r, 600));
    expect(await read(rt, 1002, probe, PROBE, "messages")).toBe(1n);
    expect(await deliveries(rt, message.transport_id as string)).toBe(1);
    expect(await deliveries(rt, withData.transport_id as string)).toBe(1);
  });

  it("a refused delivery says why in words and keeps the raw revert data: Error(string), panic, custom error, no code", async () => {
    const deployed = await ok(rt, "deploy_new_contract", {
      ...signer(),
      chain_id: 1002,
      bytecode: TransportProbe.bytecode,
    });
    await receiptOf(rt, deployed.tx_hash as string, "?chain_id=1002");
    const send = async (destination: string, payload: string) => {
      const sent = await ok(rt, "transport_arbitrary_message", {
        ...signer(),
        destination_chain_id: 1002,
        destination,
        payload,
      });
      return settled(rt, sent.transport_id as string, 120_000);
    };
    const probe = deployed.address as string;
    const [text, panic, custom] = await Promise.all([
      send(probe, "0xe1"),
      send(probe, "0xe2"),
      send(probe, "0xe3"),
    ]);
    expect(text).toMatchObject({
      state: "failed",
      error: "delivery refused: execution reverted: probe refuses this payload",
      revert_data: expect.stringMatching(/^0x08c379a0/),
    });
    expect(panic).toMatchObject({
      state: "failed",
      error: "delivery refused: execution reverted: panic 0x12: division or modulo by zero",
      revert_data: `0x4e487b71${(0x12).toString(16).padStart(64, "0")}`,
    });
    const selector = toFunctionSelector("ProbeRefused(uint256)");
    expect(custom).toMatchObject({
      state: "failed",
      error: `delivery refused: execution reverted: custom error ${selector} (undecoded; see revert_data)`,
      revert_data: `${selector}${(7).toString(16).padStart(64, "0")}`,
    });
    expect(await read(rt, 1002, probe, PROBE, "messages")).toBe(0n);
    // A receiver with no code could only revert: refused before anything is signed, saying why.
    const before = await transportCount(rt);
    for (const [path, fields] of [
      [
        "transport_arbitrary_message",
        { destination: "0x00000000000000000000000000000000000000dd", payload: "0xe1" },
      ],
      [
        "transport_token_with_data",
        { token: probe, to: "0x00000000000000000000000000000000000000dd", amount: "1", data: "0x01" },
      ],
    ] as const) {
      const refused = await op(rt, path, { ...signer(), destination_chain_id: 1002, ...fields });
      expect(refused.error?.data?.code, path).toBe("RECEIVER_NOT_CONTRACT");
      expect(refused.error?.message).toMatch(
        /0x0+dd has no code on chain 1002: delivery calls on(Message|TokenTransport)/,
      );
    }
    expect(await transportCount(rt)).toBe(before);
  }, 300_000);

  it("answers bad input with -32602 naming the field, and wallet errors with their codes", async () => {
    const missing = await op(rt, "create_new_ERC20_token", { ...signer(), symbol: "X", initial_supply: 1 });
    expect(missing.error).toMatchObject({ code: -32602 });
    expect(missing.error?.message).toContain("name");
    // A mixed-case address must be a valid EIP-55 checksum: a typo is caught, not sent.
    const typo = await op(rt, "transfer_tokens", {
      ...signer(),
      token: "0x000000000000000000000000000000000000bEEf",
      to: RECIPIENT_1002,
      amount: 1,
    });
    expect(typo.error).toMatchObject({ code: -32602, data: { code: "INVALID_ADDRESS" } });
    expect(typo.error?.message).toContain("token");
    const badAmount = await op(rt, "transfer_tokens", {
      ...signer(),
      token: RECIPIENT_1002,
      to: RECIPIENT_1002,
      amount: "-1",
    });
    expect(badAmount.error?.message).toContain("amount");
    const extra = await op(rt, "list_all_members", { colour: "red" });
    expect(extra.error?.code).toBe(-32602);
    const createAs = (wallet_id: string, password: string) =>
      op(rt, "create_new_ERC20_token", { wallet_id, password, name: "A", symbol: "A", initial_supply: 1 });
    expect((await createAs(alice.id, "nope")).error?.code).toBe(-32001);
    expect((await createAs("nope", "x")).error?.code).toBe(-32004);
    const notChaingate = await op(rt, "trasport_token", {
      ...signer(),
      token: RECIPIENT_1002,
      to: RECIPIENT_1002,
      amount: 1,
      destination_chain_id: 1002,
    });
    expect(notChaingate.error?.data?.code).toBe("TOKEN_NOT_FOUND");
    // A plain params object (no envelope) works as well.
    const plain = await rt.post("/list_all_members", { role: "ISSUER" });
    expect((plain.json as { result: { name: string }[] }).result.map((m) => m.name)).toEqual(["Peer Bank"]);
    expect(await transport(rt, `0x${"00".repeat(32)}`)).toBeUndefined();
  });
});
