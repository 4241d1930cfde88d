/** What the side-by-side benches share: a process's CPU from /proc, percentiles, and min/median/max over rounds. */
import { readFileSync } from "node:fs";

/** A process's resident memory in MB, from /proc. */
export function rssMbOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
}

/** CPU seconds a process has used (user + system), from /proc: the processes share the two cores. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ ticks
  } catch {
    return 0; // the process ended between the listing and the read
  }
}

export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** A quantity's min, median and max over rounds. */
export const spread = (xs: number[]) => ({
  min: round(Math.min(...xs)),
  median: round(percentile(xs, 50)),
  max: round(Math.max(...xs)),
});
