/** Token operations signed by a custody wallet: create ERC20/ERC721 through the endpoint, transfer, deploy. */
import { randomBytes } from "node:crypto";
import { type Abi, encodeDeployData, encodeFunctionData, getContractAddress, type Hex, toHex } from "viem";
import { BridgeERC20, BridgeERC721, MessageEndpoint } from "../contracts/artifacts.generated.js";
import { codeAt, readContract } from "../contracts/chain-calls.js";
import { explainRevert } from "../contracts/contract-errors.js";
import { type SystemContracts, type TokenIdentity, tokenAddress } from "../contracts/system-contracts.js";
import { badRequest } from "../errors/chaingate-error.js";
import type { Signer } from "../operations/signed-input.js";
import type { SignedOperation, Submitted, TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { Chain } from "../upstream/chain-registry.js";

export type TokenStandard = "ERC20" | "ERC721";

export interface TokenServiceOptions {
  pipeline: TransactionPipeline;
  system: () => SystemContracts;
}

const ERC721_INTERFACE = "0x80ac58cd";
const SUPPORTS_INTERFACE = [
  {
    type: "function",
    name: "supportsInterface",
    stateMutability: "view",
    inputs: [{ name: "id", type: "bytes4" }],
    outputs: [{ name: "", type: "bool" }],
  },
] as const;

export class TokenService {
  constructor(private readonly options: TokenServiceOptions) {}

  /** Every signed token operation goes through here: the pipeline, and contract reverts in words. */
  async submit(signer: Signer, op: Omit<SignedOperation, "chain" | "account" | "walletId" | "addressIndex">) {
    try {
      return await this.options.pipeline.submit({
        chain: signer.chain,
        account: signer.account,
        walletId: signer.walletId,
        addressIndex: signer.index,
        idempotencyRef: signer.idempotencyRef,
        ...op,
      });
    } catch (error) {
      throw explainRevert(error);
    }
  }

  async createERC20(
    signer: Signer,
    input: { name: string; symbol: string; decimals: number; initialSupply: bigint },
    owner: string | null,
  ) {
    const identity = this.identity(signer, "ERC20", input.name, input.symbol, input.decimals, "");
    const endpoint = this.options.system().endpoint;
    const submitted = await this.submit(signer, {
      to: endpoint,
      data: encodeFunctionData({
        abi: MessageEndpoint.abi,
        functionName: "createERC20",
        args: [input.name, input.symbol, input.decimals, input.initialSupply, identity.salt],
      }),
      value: 0n,
      kind: "create_new_ERC20_token",
      metadata: {
        token: tokenAddress(endpoint, identity),
        name: input.name,
        symbol: input.symbol,
        decimals: input.decimals,
        initial_supply: input.initialSupply.toString(),
      },
      owner,
    });
    return {
      address: tokenAddress(endpoint, identity),
      standard: "ERC20" as const,
      name: input.name,
      symbol: input.symbol,
      decimals: input.decimals,
      initial_supply: input.initialSupply.toString(),
      owner: signer.account.address,
      chain_id: signer.chain.chainId,
      tx_hash: submitted.txHash,
    };
  }

  async createERC721(
    signer: Signer,
    input: { name: string; symbol: string; baseUri: string; mint: bigint[] },
    owner: string | null,
  ) {
    if (new Set(input.mint).size !== input.mint.length) {
      throw badRequest("INVALID_PARAMS", "mint lists a token id twice");
    }
    const identity = this.identity(signer, "ERC721", input.name, input.symbol, 0, input.baseUri);
    const endpoint = this.options.system().endpoint;
    const submitted = await this.submit(signer, {
      to: endpoint,
      data: encodeFunctionData({
        abi: MessageEndpoint.abi,
        functionName: "createERC721",
        args: [input.name, input.symbol, input.baseUri, input.mint, identity.salt],
      }),
      value: 0n,
      kind: "create_new_ERC721_token",
      metadata: {
        token: tokenAddress(endpoint, identity),
        name: input.name,
        symbol: input.symbol,
        minted: input.mint.map(String),
      },
      owner,
    });
    return {
      address: tokenAddress(endpoint, identity),
      standard: "ERC721" as const,
      name: input.name,
      symbol: input.symbol,
      base_uri: input.baseUri,
      minted: input.mint.map(String),
      owner: signer.account.address,
      chain_id: signer.chain.chainId,
      tx_hash: submitted.txHash,
    };
  }

  async transfer(
    signer: Signer,
    input: { token: Hex; to: Hex; amount?: bigint; tokenId?: bigint },
    owner: string | null,
  ) {
    const standard = await this.standardOf(signer.chain, input.token);
    if (standard === "ERC20" && input.amount === undefined) {
      throw badRequest("INVALID_PARAMS", "token is an ERC20: give `amount`, not `token_id`");
    }
    if (standard === "ERC721" && input.tokenId === undefined) {
      throw badRequest("INVALID_PARAMS", "token is an ERC721: give `token_id`, not `amount`");
    }
    const data =
      standard === "ERC20"
        ? encodeFunctionData({
            abi: BridgeERC20.abi,
            functionName: "transfer",
            args: [input.to, input.amount!],
          })
        : encodeFunctionData({
            abi: BridgeERC721.abi,
            functionName: "transferFrom",
            args: [signer.account.address, input.to, input.tokenId!],
          });
    const details =
      standard === "ERC20" ? { amount: input.amount!.toString() } : { token_id: input.tokenId!.toString() };
    const submitted = await this.submit(signer, {
      to: input.token,
      data,
      value: 0n,
      kind: "transfer_tokens",
      metadata: { token: input.token, standard, to: input.to, ...details },
      owner,
    });
    return {
      tx_hash: submitted.txHash,
      chain_id: signer.chain.chainId,
      token: input.token,
      standard,
      from: signer.account.address,
      to: input.to,
      ...details,
    };
  }

  async deployContract(
    signer: Signer,
    input: { bytecode: Hex; abi?: Abi; constructorArgs?: unknown[] },
    owner: string | null,
  ) {
    let data: Hex = input.bytecode;
    if (
      input.abi !== undefined ||
      (input.constructorArgs !== undefined && input.constructorArgs.length > 0)
    ) {
      try {
        data = encodeDeployData({
          abi: input.abi ?? [],
          bytecode: input.bytecode,
          args: input.constructorArgs ?? [],
        } as Parameters<typeof encodeDeployData>[0]);
      } catch (error) {
        throw badRequest(
          "INVALID_CONSTRUCTOR_ARGS",
          `constructor_args do not fit the abi: ${shortMessage(error)}`,
        );
      }
    }
    const submitted: Submitted = await this.submit(signer, {
      to: null,
      data,
      value: 0n,
      kind: "deploy_new_contract",
      metadata: {},
      owner,
    });
    return {
      address: getContractAddress({ from: signer.account.address, nonce: BigInt(submitted.nonce) }),
      chain_id: signer.chain.chainId,
      tx_hash: submitted.txHash,
    };
  }

  /** chaingate's own tokens say what they are; any other token is asked for ERC-165's ERC721 id. */
  async standardOf(chain: Chain, token: Hex): Promise<TokenStandard> {
    const endpoint = this.options.system().endpoint;
    const info = await readContract(chain, endpoint, MessageEndpoint.abi, "tokenOf", [token]);
    if (info.token !== "0x0000000000000000000000000000000000000000")
      return info.standard === 0 ? "ERC20" : "ERC721";
    if ((await codeAt(chain, token)) === "0x") {
      throw badRequest("TOKEN_NOT_FOUND", `no contract at ${token} on chain ${chain.chainId}`);
    }
    try {
      return (await readContract(chain, token, SUPPORTS_INTERFACE, "supportsInterface", [ERC721_INTERFACE]))
        ? "ERC721"
        : "ERC20";
    } catch {
      return "ERC20";
    }
  }

  private identity(
    signer: Signer,
    standard: TokenStandard,
    name: string,
    symbol: string,
    decimals: number,
    baseUri: string,
  ): TokenIdentity {
    return {
      standard,
      name,
      symbol,
      decimals,
      baseUri,
      creator: signer.account.address,
      homeChainId: signer.chain.chainId,
      salt: toHex(randomBytes(32)),
    };
  }
}

function shortMessage(error: unknown): string {
  return ((error as { shortMessage?: string }).shortMessage ?? (error as Error).message).split("\n")[0] ?? "";
}
