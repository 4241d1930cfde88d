/** Where chaingate's own contracts live (CREATE2, the same address on every chain) and their deployment. */
import type { Logger } from "pino";
import {
  concat,
  encodeAbiParameters,
  encodeDeployData,
  getContractAddress,
  type Hex,
  keccak256,
  type LocalAccount,
  toBytes,
  toHex,
} from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { nodeRead } from "../upstream/node-reads.js";
import { BridgeERC20, BridgeERC721, MemberRegistry, MessageEndpoint } from "./artifacts.generated.js";
import { codeAt, deployedCodeAt, waitForReceipt } from "./chain-calls.js";
import { CREATE2_DEPLOYER, ensureCreate2Factory } from "./create2-factory.js";
import { submitAsOperator } from "./operator-submit.js";

export { CREATE2_DEPLOYER };

const SYSTEM_SALT = keccak256(toBytes("chaingate.system.v1"));

export interface SystemContracts {
  /** Writes the registry and is the endpoints' only relayer. */
  readonly operator: LocalAccount;
  /** On the home chain only. */
  readonly registry: Hex;
  /** On every configured chain. */
  readonly endpoint: Hex;
  readonly homeChainId: number;
}

function initCodes(operator: Hex) {
  return {
    registry: encodeDeployData({
      abi: MemberRegistry.abi,
      bytecode: MemberRegistry.bytecode,
      args: [operator],
    }),
    endpoint: encodeDeployData({
      abi: MessageEndpoint.abi,
      bytecode: MessageEndpoint.bytecode,
      args: [operator],
    }),
  };
}

const create2 = (from: Hex, salt: Hex, bytecode: Hex): Hex =>
  getContractAddress({ opcode: "CREATE2", from, salt, bytecode });

export function systemAddresses(operator: Hex): { registry: Hex; endpoint: Hex } {
  const init = initCodes(operator);
  return {
    registry: create2(CREATE2_DEPLOYER, SYSTEM_SALT, init.registry),
    endpoint: create2(CREATE2_DEPLOYER, SYSTEM_SALT, init.endpoint),
  };
}

export interface TokenIdentity {
  standard: "ERC20" | "ERC721";
  name: string;
  symbol: string;
  decimals: number;
  baseUri: string;
  creator: Hex;
  homeChainId: number;
  salt: Hex;
}

/** The address the endpoint gives a token, on its home chain and on every chain it is transported to. */
export function tokenAddress(endpoint: Hex, token: TokenIdentity): Hex {
  const salt = keccak256(
    encodeAbiParameters(
      [{ type: "address" }, { type: "uint64" }, { type: "bytes32" }],
      [token.creator, BigInt(token.homeChainId), token.salt],
    ),
  );
  const init =
    token.standard === "ERC20"
      ? encodeDeployData({
          abi: BridgeERC20.abi,
          bytecode: BridgeERC20.bytecode,
          args: [token.name, token.symbol, token.decimals, token.creator, endpoint],
        })
      : encodeDeployData({
          abi: BridgeERC721.abi,
          bytecode: BridgeERC721.bytecode,
          args: [token.name, token.symbol, token.baseUri, token.creator, endpoint],
        });
  return create2(endpoint, salt, init);
}

export interface DeployOptions {
  chains: ChainRegistry;
  operator: LocalAccount;
  pipeline: TransactionPipeline;
  logger: Logger;
  /** Devnet: give the operator ether first (anvil_setBalance). */
  fund?: boolean;
}

async function deployOne(options: DeployOptions, chain: Chain, name: string, init: Hex, address: Hex) {
  if ((await codeAt(chain, address)) !== "0x") return;
  const submitted = await submitAsOperator(options.pipeline, options.operator, {
    chain,
    to: CREATE2_DEPLOYER,
    data: concat([SYSTEM_SALT, init]),
    kind: "system_deployment",
    metadata: { contract: name, address },
  });
  const receipt = await waitForReceipt(chain, submitted.txHash);
  if (receipt.status !== "0x1" || (await deployedCodeAt(chain, address)) === "0x") {
    throw new ChaingateError(`deploying ${name} on chain ${chain.chainId} failed (${submitted.txHash})`, {
      code: "DEPLOYMENT_FAILED",
    });
  }
  options.logger.info({ chain: chain.chainId, contract: name, address, tx: submitted.txHash }, "deployed");
}

/** Deploys whatever is missing: the registry on the home chain and an endpoint on every chain. */
export async function deploySystemContracts(options: DeployOptions): Promise<SystemContracts> {
  const { chains, operator } = options;
  const init = initCodes(operator.address);
  const addresses = systemAddresses(operator.address);
  await Promise.all(
    chains.all().map(async (chain) => {
      if (options.fund) {
        await nodeRead(chain, "anvil_setBalance", [operator.address, toHex(10n ** 24n)]);
      }
      const missing = [
        ...(chain.chainId === chains.homeChainId ? [addresses.registry] : []),
        addresses.endpoint,
      ];
      const absent = await Promise.all(
        missing.map(async (address) => (await codeAt(chain, address)) === "0x"),
      );
      if (absent.some(Boolean)) {
        // Before anything is sent to the factory's address: a call to an empty address would spend gas and deploy nothing.
        const factory = await ensureCreate2Factory(chain, operator, options.pipeline);
        if (factory === "deployed")
          options.logger.info(
            { chain: chain.chainId, address: CREATE2_DEPLOYER },
            "deployed the CREATE2 factory",
          );
      }
      if (chain.chainId === chains.homeChainId) {
        await deployOne(options, chain, "MemberRegistry", init.registry, addresses.registry);
      }
      await deployOne(options, chain, "MessageEndpoint", init.endpoint, addresses.endpoint);
    }),
  );
  return { operator, ...addresses, homeChainId: chains.homeChainId };
}

/** The chains on which a system contract is missing (real networks: the operator deploys once). */
export async function missingSystemContracts(chains: ChainRegistry, operator: Hex): Promise<string[]> {
  const addresses = systemAddresses(operator);
  const missing: string[] = [];
  for (const chain of chains.all()) {
    if (chain.chainId === chains.homeChainId && (await codeAt(chain, addresses.registry)) === "0x") {
      missing.push(`MemberRegistry on ${chain.chainId}`);
    }
    if ((await codeAt(chain, addresses.endpoint)) === "0x")
      missing.push(`MessageEndpoint on ${chain.chainId}`);
  }
  return missing;
}
