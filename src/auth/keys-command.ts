/** `chaingate keys create|list|revoke`: manages API keys in the configured store, without starting the service. */

import type { Config } from "../config/config.js";
import { openStore } from "../store/database.js";
import { storeLocation } from "../store/open-configured-store.js";
import { ApiKeyStore } from "./api-keys.js";

export interface KeysCommand {
  action: "create" | "list" | "revoke";
  role?: "admin" | "user";
  name?: string;
  id?: string;
  /** What is left for the option parser (--data-dir, --database-url, ...). */
  rest: string[];
}

export const KEYS_USAGE =
  "usage: chaingate keys create --role admin|user [--name <name>] | keys list | keys revoke <id>  [options]";

/** Splits the command's own words from the service options; throws a usage message on a mistake. */
export function parseKeysCommand(argv: readonly string[]): KeysCommand {
  const [action, ...tail] = argv;
  if (action !== "create" && action !== "list" && action !== "revoke") throw new Error(KEYS_USAGE);
  const command: KeysCommand = { action, rest: [] };
  for (let i = 0; i < tail.length; i++) {
    const arg = tail[i]!;
    const [flag, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    if (action === "create" && (flag === "--role" || flag === "--name")) {
      const value = inline ?? tail[++i];
      if (value === undefined) throw new Error(`${flag} needs a value; ${KEYS_USAGE}`);
      if (flag === "--role") {
        if (value !== "admin" && value !== "user")
          throw new Error(`--role must be admin or user; ${KEYS_USAGE}`);
        command.role = value;
      } else command.name = value;
    } else if (action === "revoke" && command.id === undefined && !arg.startsWith("--")) {
      command.id = arg;
    } else {
      command.rest.push(arg);
    }
  }
  if (action === "create" && command.role === undefined) throw new Error(`--role is required; ${KEYS_USAGE}`);
  if (action === "revoke" && command.id === undefined)
    throw new Error(`the key id is required; ${KEYS_USAGE}`);
  return command;
}

/** Runs the command; answers the text to print (the new key is printed once and never again). */
export async function runKeysCommand(command: KeysCommand, config: Config): Promise<string> {
  const store = await openStore(storeLocation(config));
  try {
    const keys = new ApiKeyStore(store);
    if (command.action === "create") {
      const created = await keys.create(command.role!, command.name ?? command.role!);
      // Wallets made before keys existed belong to no key: no key lists or signs with them until
      // an operator gives each to one.
      const unowned = await store.db
        .selectFrom("wallets")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("owner", "is", null)
        .executeTakeFirst();
      const n = Number(unowned?.n ?? 0);
      return JSON.stringify(
        n === 0
          ? created
          : {
              ...created,
              notice: `${n} wallet(s) made before API keys existed belong to no key: an admin key lists them (GET /wallet, owner null); give each to a key with \`chaingate wallets assign <wallet-id> --key <key-id>\` (or POST /wallet/{id}/owner)`,
            },
      );
    }
    if (command.action === "revoke") {
      await keys.revoke(command.id!);
      return JSON.stringify({ revoked: command.id });
    }
    return (await keys.list()).map((key) => JSON.stringify(key)).join("\n");
  } finally {
    await store.close();
  }
}
