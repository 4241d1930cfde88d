/** Finds (or, on the devnet and for `contracts deploy`, deploys) chaingate's contracts on every chain. */
import type { Logger } from "pino";
import type { Config } from "../config/config.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Pkcs11Token } from "../keys/pkcs11-token.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { operatorAccount } from "./operator.js";
import {
  deploySystemContracts,
  missingSystemContracts,
  type SystemContracts,
  systemAddresses,
} from "./system-contracts.js";

export interface ResolvedSystem {
  /** Undefined when no operator key is configured or the contracts are missing somewhere. */
  system: SystemContracts | undefined;
  /** The contracts, or the error that says why members and transports are off. */
  systemOf: () => SystemContracts;
}

export async function resolveSystemContracts(deps: {
  config: Config;
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  logger: Logger;
  /** The embedded chains: the contracts are deployed, and the operator funded, at every start. */
  embedded: boolean;
  deploy: boolean;
  /** The PKCS#11 token, where the operator key may be (`--operator-key-pkcs11`). */
  hsm?: Pkcs11Token | undefined;
}): Promise<ResolvedSystem> {
  const { chains, logger } = deps;
  const operator = await operatorAccount(deps.config, deps.embedded, deps.hsm);
  let system: SystemContracts | undefined;
  if (operator && (deps.embedded || deps.deploy)) {
    system = await deploySystemContracts({
      chains,
      operator,
      pipeline: deps.pipeline,
      logger,
      fund: deps.embedded,
    });
  } else if (operator) {
    const missing = await missingSystemContracts(chains, operator.address);
    if (missing.length === 0)
      system = { operator, ...systemAddresses(operator.address), homeChainId: chains.homeChainId };
    else {
      logger.warn(
        { missing },
        "system contracts missing: run `chaingate contracts deploy`; members and transports are off",
      );
    }
  } else {
    logger.warn("no operator key (CHAINGATE_OPERATOR_KEY): members and transports are off");
  }
  const systemOf = (): SystemContracts => {
    if (system) return system;
    throw new ChaingateError(
      operator
        ? "chaingate's contracts are not deployed on every chain: run `chaingate contracts deploy`"
        : "no operator key is configured (CHAINGATE_OPERATOR_KEY), so members and transports are off",
      { code: "CONTRACTS_UNAVAILABLE" },
    );
  };
  return { system, systemOf };
}
