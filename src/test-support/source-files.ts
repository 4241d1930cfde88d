/** The source files the structure tests read: every `.ts` under a folder that is not a test. */
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every non-test `.ts` file under `dir`; with `skipTestSupport`, test-support/ is left out. */
export function sourceFiles(dir: string, { skipTestSupport = true } = {}): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return skipTestSupport && entry.name === "test-support" ? [] : sourceFiles(path, { skipTestSupport });
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}
