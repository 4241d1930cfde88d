/** A named pipe (FIFO) for tests of writers whose reader stops: opened for reading, read only when asked. */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Fifo {
  path: string;
  /** Reads what the pipe holds now and answers everything read so far. */
  read(): string;
  close(): void;
}

/** A FIFO with its reading end open (so a writer can open it) and nothing read yet. */
export function openFifo(prefix: string): Fifo {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, "log");
  execFileSync("mkfifo", [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  let text = "";
  const chunk = Buffer.alloc(64 * 1024);
  return {
    path,
    read() {
      for (;;) {
        let n = 0;
        try {
          n = readSync(reader, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
        }
        if (n <= 0) return text;
        text += chunk.toString("utf8", 0, n);
      }
    },
    close() {
      closeSync(reader);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
