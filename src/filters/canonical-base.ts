/** After a reorg: the newest remembered block the chain still has, and the remembered blocks it replaced. */

export interface RememberedBlock {
  n: number;
  h: string;
}

/**
 * Walks `remembered` newest first, asking the chain for each block's hash, until one still matches:
 * that block is the base delivery resumes after, and every newer remembered block was replaced.
 * When none matches, the base is the block below the oldest remembered (or `fallback` when nothing
 * is remembered): its logs are the oldest that can be reported as removed.
 */
export async function canonicalBase<B extends RememberedBlock>(
  remembered: readonly B[],
  hashAt: (n: number) => Promise<string | null>,
  fallback: number,
): Promise<{ base: number; replaced: B[] }> {
  const newestFirst = [...remembered].sort((a, b) => b.n - a.n);
  const replaced: B[] = [];
  for (const block of newestFirst) {
    if ((await hashAt(block.n)) === block.h) return { base: block.n, replaced };
    replaced.unshift(block);
  }
  const oldest = newestFirst.at(-1);
  return { base: oldest === undefined ? fallback : oldest.n - 1, replaced };
}
