/** A counting semaphore: at most `permits` holders at once, the rest wait in arrival order. */
export class Semaphore {
  private readonly waiters: (() => void)[] = [];
  private active = 0;

  constructor(private readonly permits: number) {}

  get waiting(): number {
    return this.waiters.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.permits) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiters.shift();
      // The permit passes straight to the next waiter, so `active` only drops when nobody waits.
      if (next) next();
      else this.active--;
    }
  }
}
