/** `chaingate policies create|list|delete`: manages signing policies in the configured store, without starting the service. */
import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import type { Config } from "../config/config.js";
import { openStore } from "../store/database.js";
import { storeLocation } from "../store/open-configured-store.js";
import { type PolicyRules, PolicyRulesSchema } from "./policy-rules.js";
import { PolicyStore } from "./policy-store.js";

export interface PoliciesCommand {
  action: "create" | "list" | "delete";
  name?: string;
  walletId?: string;
  apiKeyId?: string;
  rules?: PolicyRules;
  id?: string;
  /** What is left for the option parser (--data-dir, --database-url, ...). */
  rest: string[];
}

export const POLICIES_USAGE =
  "usage: chaingate policies create --name <name> [--wallet <id>] [--key <api key id>] (--rules '<json>' | --rules-file <path>) | policies list | policies delete <id>  [options]";

function readRules(text: string): PolicyRules {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`the rules are not JSON; ${POLICIES_USAGE}`);
  }
  if (!Value.Check(PolicyRulesSchema, parsed)) {
    const problems = [...Value.Errors(PolicyRulesSchema, parsed)]
      .slice(0, 5)
      .map((e) => `${e.path || "/"} ${e.message}`);
    throw new Error(`the rules are not valid: ${problems.join("; ")}`);
  }
  return parsed;
}

/** Splits the command's own words from the service options; throws a usage message on a mistake. */
export function parsePoliciesCommand(argv: readonly string[]): PoliciesCommand {
  const [action, ...tail] = argv;
  if (action !== "create" && action !== "list" && action !== "delete") throw new Error(POLICIES_USAGE);
  const command: PoliciesCommand = { action, rest: [] };
  const own = ["--name", "--wallet", "--key", "--rules", "--rules-file"];
  for (let i = 0; i < tail.length; i++) {
    const arg = tail[i]!;
    const eq = arg.indexOf("=");
    const [flag, inline] = eq >= 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    if (action === "create" && own.includes(flag)) {
      const value = inline ?? tail[++i];
      if (value === undefined) throw new Error(`${flag} needs a value; ${POLICIES_USAGE}`);
      if (flag === "--name") command.name = value;
      else if (flag === "--wallet") command.walletId = value;
      else if (flag === "--key") command.apiKeyId = value;
      else if (flag === "--rules") command.rules = readRules(value);
      else command.rules = readRules(readFileSync(value, "utf8"));
    } else if (action === "delete" && command.id === undefined && !arg.startsWith("--")) {
      command.id = arg;
    } else {
      command.rest.push(arg);
    }
  }
  if (action === "create") {
    if (command.name === undefined) throw new Error(`--name is required; ${POLICIES_USAGE}`);
    if (command.rules === undefined)
      throw new Error(`--rules or --rules-file is required; ${POLICIES_USAGE}`);
    if (command.walletId === undefined && command.apiKeyId === undefined)
      throw new Error(`a policy needs --wallet, --key, or both; ${POLICIES_USAGE}`);
  }
  if (action === "delete" && command.id === undefined)
    throw new Error(`the policy id is required; ${POLICIES_USAGE}`);
  return command;
}

/** Runs the command; answers the text to print (one JSON object per line). */
export async function runPoliciesCommand(command: PoliciesCommand, config: Config): Promise<string> {
  const store = await openStore(storeLocation(config));
  try {
    const policies = new PolicyStore(store);
    if (command.action === "create") {
      const created = await policies.create(
        {
          name: command.name!,
          wallet_id: command.walletId,
          api_key_id: command.apiKeyId,
          rules: command.rules!,
        },
        null,
      );
      return JSON.stringify(created);
    }
    if (command.action === "delete") {
      await policies.delete(command.id!, null);
      return JSON.stringify({ deleted: command.id });
    }
    return (await policies.list()).map((p) => JSON.stringify(p)).join("\n");
  } finally {
    await store.close();
  }
}
