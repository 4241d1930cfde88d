/** Tiny hand-assembled contracts and anvil's well-known dev accounts, for tests that need logs and reverts. */
import { encodeAbiParameters } from "viem";
import { privateKeyToAccount } from "viem/accounts";

/** anvil's first default account (mnemonic "test test ... junk"); public knowledge, devnet only. */
export const DEV_ACCOUNT = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as const;
export const DEV_PRIVATE_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as const;
export const DEV_ACCOUNT_2 = "0x70997970C51812DC3A010C7901B1FCcCCc3F7Aa2" as const;

export const EMITTER_TOPIC = `0x${"ab".repeat(32)}` as const;

/** Creation code whose runtime emits LOG1(EMITTER_TOPIC) with empty data on every call. */
export const EMITTER_INIT_CODE = `0x602780600b6000396000f37f${"ab".repeat(32)}60006000a100` as const;

/** Creation code whose runtime always reverts with the 4 bytes 0xdeadbeef. */
export const REVERTER_INIT_CODE = "0x600d80600b6000396000f363deadbeef6000526004601cfd" as const;

/** A signed 1-wei transfer from DEV_ACCOUNT to DEV_ACCOUNT_2 on chain 1001, as a client would send it. */
export function signedDevTransfer(nonce: number): Promise<`0x${string}`> {
  return privateKeyToAccount(DEV_PRIVATE_KEY).signTransaction({
    type: "eip1559",
    chainId: 1001,
    nonce,
    gas: 21_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    to: DEV_ACCOUNT_2,
    value: 1n,
  });
}

/** Creation code whose runtime always reverts with Error(reason) (any call, any data). */
export function reasonReverterInitCode(reason: string): `0x${string}` {
  const data = `08c379a0${encodeAbiParameters([{ type: "string" }], [reason]).slice(2)}`;
  const length = data.length / 2;
  const word = (n: number) => n.toString(16).padStart(4, "0");
  // CODECOPY the revert data from after the 14-byte head, then REVERT with it.
  const head = (offset: number) => `61${word(length)}61${word(offset)}600039${`61${word(length)}`}6000fd`;
  const runtime = head(head(0).length / 2) + data;
  const size = runtime.length / 2;
  return `0x61${word(size)}80600c6000396000f3${runtime}`;
}

/** EIP-712 type fields written as "name type, name type": `typedFields("owner address, value uint256")`. */
export function typedFields(spec: string): { name: string; type: string }[] {
  return spec.split(",").map((field) => {
    const [name, type] = field.trim().split(/\s+/);
    return { name: name!, type: type! };
  });
}
