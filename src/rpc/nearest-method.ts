/** The method a mistyped name most likely meant: the same name in another case, else the closest by edit distance. */

/** Edits (insert, delete, substitute) between two strings, stopping early past `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      if (value < best) best = value;
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** The known name `name` most likely meant, or undefined when none is close (a third of its length at most, and 3). */
export function nearestMethod(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameWord = known.find((k) => k.toLowerCase() === lower);
  if (sameWord !== undefined) return sameWord;
  const limit = Math.min(3, Math.floor(name.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const candidate of known) {
    const d = distance(lower, candidate.toLowerCase(), limit);
    if (d <= limit && (best === undefined || d < best.d)) best = { name: candidate, d };
  }
  return best?.name;
}
