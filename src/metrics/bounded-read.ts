/** A gauge's read of the store that takes at most a fixed share of the process's time, however large the tables grow. */

/**
 * Counting a table's rows by state reads every row's index entry: on SQLite 60-100 ms of the event
 * loop a scrape at a million transactions (#17), on PostgreSQL a scan per scrape per instance. A
 * BoundedRead runs its query, notes how long it took, and, when that was `cheapMs` (5 ms) or more, answers
 * the same values until `1 / share` times that has passed since it began (at 2%: a read of 80 ms is
 * repeated after 4 s). A cheaper read (tables up to tens of thousands of rows) is made again at
 * every scrape, so a count is exact right after a change while it costs nearly nothing; a costly
 * one is a little stale, and never takes more than `share` of the time. The time includes a wait
 * for the store's connection, so a busy store is read less often too. Concurrent scrapes share one
 * read.
 */
export class BoundedRead<T> {
  private last: { value: T; until: number } | undefined;
  private running: Promise<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly share = 0.02,
    private readonly cheapMs = 5,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): Promise<T> {
    const last = this.last;
    if (last !== undefined && this.now() < last.until) return Promise.resolve(last.value);
    this.running ??= this.refresh().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async refresh(): Promise<T> {
    const started = this.now();
    const value = await this.read();
    const took = this.now() - started;
    this.last = took < this.cheapMs ? undefined : { value, until: started + took / this.share };
    return value;
  }
}
