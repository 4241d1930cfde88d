/** The data directory holds every keystore: created 0700, its SQLite files 0600; a looser existing one is reported. */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";

/** Creates the directory (0700) when missing; answers its mode when others may read it, else undefined. */
export function prepareDataDir(dir: string): number | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  return (mode & 0o077) === 0 ? undefined : mode;
}

/**
 * The SQLite file is created 0600 before SQLite opens it (its -wal and -shm files take the main
 * file's mode), and an existing one readable by others is narrowed to 0600.
 */
export function secureDatabaseFile(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  }
}

/** Prepares the data directory, warning when other users can read it (it holds every keystore). */
export function prepareDataDirOrWarn(dir: string, logger: { warn(obj: object, msg: string): void }): void {
  const looseMode = prepareDataDir(dir);
  if (looseMode !== undefined) {
    logger.warn(
      { dataDir: dir, mode: looseMode.toString(8) },
      "the data directory can be read by other users and holds every keystore: chmod 700 it",
    );
  }
}
