/** The standard CREATE2 factory on chains that lack it: deployed once by its keyless transaction, at its one address everywhere. */
import type { Hex, LocalAccount } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { NodeRpcError } from "../errors/rpc-errors.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, nonceOf, sendRawTransaction } from "../upstream/node-reads.js";
import { codeAt, deployedCodeAt, waitForReceipt } from "./chain-calls.js";

/** The deterministic-deployment proxy (Arachnid's), at the same address on every chain that has it. */
export const CREATE2_DEPLOYER: Hex = "0x4e59b44847b379578588920ca78fbf26c0b4956c";

/**
 * The factory's deployment: a pre-EIP-155 transaction (no chain id) signed by a key nobody holds
 * (r = s = 0x22...), so it is valid on every chain, once, from the address it recovers to.
 */
export const FACTORY_DEPLOYMENT = {
  raw: "0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222",
  signer: "0x3fab184622dc19b6109349b94811493bf2a45362",
  /** 100,000 gas at 100 gwei: what the signer must hold. */
  cost: 100_000n * 100_000_000_000n,
  gasPrice: 100_000_000_000n,
} as const satisfies Record<string, unknown>;

function unavailable(chain: Chain, why: string): ChaingateError {
  return new ChaingateError(
    `chain ${chain.chainId} has no CREATE2 factory at ${CREATE2_DEPLOYER} (chaingate's contracts live at the same address on every chain through it), and it could not be deployed: ${why}`,
    { code: "DEPLOYMENT_FAILED" },
  );
}

/**
 * Makes sure the factory is on `chain`: nothing when it is (anvil and most public chains predeploy
 * it); otherwise funds its signer from the operator and sends the keyless transaction. Every check
 * is made before the operator spends anything, and a refusal says what the chain needs.
 */
export async function ensureCreate2Factory(
  chain: Chain,
  operator: LocalAccount,
  pipeline: TransactionPipeline,
): Promise<"present" | "deployed"> {
  if ((await codeAt(chain, CREATE2_DEPLOYER)) !== "0x") return "present";
  const { signer, cost, gasPrice } = FACTORY_DEPLOYMENT;
  if ((await nonceOf(chain, signer, "latest")) > 0)
    throw unavailable(chain, `its signer ${signer} has already used its only nonce on this chain`);
  const block = await nodeRead(chain, "eth_getBlockByNumber", ["latest", false]);
  if (block?.baseFeePerGas !== undefined && BigInt(block.baseFeePerGas) > gasPrice)
    throw unavailable(
      chain,
      `the chain's base fee (${BigInt(block.baseFeePerGas)} wei) is above the transaction's fixed 100 gwei`,
    );
  const balance = BigInt(await nodeRead(chain, "eth_getBalance", [signer, "latest"]));
  if (balance < cost) {
    const funding = await pipeline.submit({
      chain,
      account: operator,
      walletId: null,
      addressIndex: null,
      to: signer,
      data: "0x",
      value: cost - balance,
      kind: "system_deployment",
      metadata: { contract: "CREATE2 factory", purpose: "fund its keyless deployment" },
    });
    const receipt = await waitForReceipt(chain, funding.txHash);
    if (receipt.status !== "0x1") throw unavailable(chain, `funding its signer failed (${funding.txHash})`);
  }
  let hash: Hex;
  try {
    hash = await sendRawTransaction(chain, FACTORY_DEPLOYMENT.raw);
  } catch (error) {
    if (!(error instanceof NodeRpcError)) throw error;
    throw unavailable(
      chain,
      `the node refused its keyless (pre-EIP-155) transaction: ${error.message}. A node must accept it once (geth: --rpc.allow-unprotected-txs), or deploy the factory at that address by other means`,
    );
  }
  const receipt = await waitForReceipt(chain, hash);
  if (receipt.status !== "0x1" || (await deployedCodeAt(chain, CREATE2_DEPLOYER)) === "0x")
    throw unavailable(chain, `its deployment transaction ${hash} did not leave code at the address`);
  return "deployed";
}
