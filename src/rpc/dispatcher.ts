/** Executes one JSON-RPC call on a chain: look up the method row, validate, then answer or forward. */
import { keccak256 } from "viem";
import type { FilterService } from "../filters/filter-service.js";
import type { Chain } from "../upstream/chain-registry.js";
import { METHODS, METHODS_BY_NAME } from "./method-table.js";
import { RESULT_NORMALIZERS } from "./normalize-results.js";
import { methodNotFound, NodeRpcError } from "./rpc-errors.js";
import { compileParams, type ParamsValidator } from "./validate-params.js";

export interface DispatcherDeps {
  filters: FilterService;
}

/** Node messages that mean "this exact transaction is already in the pool": success for a resend. */
const ALREADY_KNOWN = /already known|known transaction|already imported|transaction already exists/i;

export class RpcDispatcher {
  private readonly validators: ReadonlyMap<string, ParamsValidator>;

  constructor(private readonly deps: DispatcherDeps) {
    this.validators = new Map(METHODS.map((m) => [m.name, compileParams(m)]));
  }

  /** Resolves to the node's result value; rejects with a ChaingateError carrying the JSON-RPC code. */
  async call(chain: Chain, method: string, params: unknown): Promise<unknown> {
    const spec = METHODS_BY_NAME.get(method);
    const validate = this.validators.get(method);
    if (!spec || !validate) throw methodNotFound(method);
    const checked = validate(params);
    if (spec.handler === "filters") return this.deps.filters.handle(chain, method, checked);
    if (method === "eth_sendRawTransaction") return sendRaw(chain, checked[0] as `0x${string}`);
    const result = await chain.pool.call({ method, params: checked });
    const normalize = RESULT_NORMALIZERS[method];
    return normalize ? normalize(result) : result;
  }
}

async function sendRaw(chain: Chain, raw: `0x${string}`): Promise<unknown> {
  try {
    return await chain.pool.call({ method: "eth_sendRawTransaction", params: [raw] });
  } catch (error) {
    // After a failover the same bytes may already be in the pool: the client's send did succeed.
    if (error instanceof NodeRpcError && ALREADY_KNOWN.test(error.message)) return keccak256(raw);
    throw error;
  }
}
