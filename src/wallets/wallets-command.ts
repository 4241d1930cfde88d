/** `chaingate wallets assign <wallet-id> --key <key-id>`: gives a wallet (one made before keys existed) to an API key, in the configured store. */
import type { Config } from "../config/config.js";
import { openStore } from "../store/database.js";
import { storeLocation } from "../store/open-configured-store.js";

export interface WalletsCommand {
  action: "assign";
  walletId: string;
  keyId: string;
  /** What is left for the option parser (--data-dir, --database-url, ...). */
  rest: string[];
}

export const WALLETS_USAGE = "usage: chaingate wallets assign <wallet-id> --key <key-id>  [options]";

export function parseWalletsCommand(argv: readonly string[]): WalletsCommand {
  const [action, ...tail] = argv;
  if (action !== "assign") throw new Error(WALLETS_USAGE);
  let walletId: string | undefined;
  let keyId: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < tail.length; i++) {
    const arg = tail[i]!;
    if (arg === "--key" || arg.startsWith("--key=")) {
      keyId = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : tail[++i];
      if (keyId === undefined || keyId === "") throw new Error(`--key needs a key id; ${WALLETS_USAGE}`);
    } else if (walletId === undefined && !arg.startsWith("--")) walletId = arg;
    else rest.push(arg);
  }
  if (walletId === undefined || keyId === undefined) throw new Error(WALLETS_USAGE);
  return { action, walletId, keyId, rest };
}

/** Runs the command against the store; answers the text to print. The key must exist and not be revoked. */
export async function runWalletsCommand(command: WalletsCommand, config: Config): Promise<string> {
  const store = await openStore(storeLocation(config));
  try {
    const key = await store.db
      .selectFrom("api_keys")
      .select(["id", "revoked_at"])
      .where("id", "=", command.keyId)
      .executeTakeFirst();
    if (!key || key.revoked_at !== null)
      throw new Error(`no live API key ${command.keyId} (chaingate keys list)`);
    const result = await store.db
      .updateTable("wallets")
      .set({ owner: command.keyId })
      .where("id", "=", command.walletId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new Error(`no wallet ${command.walletId}`);
    return JSON.stringify({ id: command.walletId, owner: command.keyId });
  } finally {
    await store.close();
  }
}
