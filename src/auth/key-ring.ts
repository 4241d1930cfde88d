/** The active keys of the store, in memory: re-read twice a second and on an unknown key (at most 4 times a second). */
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { ApiKeyRole } from "../store/schema.js";
import type { ApiKeyStore } from "./api-keys.js";
import { hashKey } from "./api-keys.js";

export interface Tenant {
  keyId: string;
  role: ApiKeyRole;
}

const REFRESH_MS = 1_000;
const MISS_REFRESH_MS = 250;

export class KeyRing {
  private keys = new Map<string, Tenant>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  private readonly loop: BackgroundLoop;
  private unsubscribe: (() => void) | undefined;
  private readonly listeners = new Set<(active: ReadonlySet<string>) => void>();

  constructor(
    private readonly store: ApiKeyStore,
    private readonly now: () => number = Date.now,
    /** How often the keys are read again regardless of the bus (what makes a missed notification harmless). */
    refreshMs: number = REFRESH_MS,
  ) {
    this.loop = new BackgroundLoop({
      name: "key ring refresh",
      everyMs: refreshMs / 2,
      firstAfterMs: refreshMs / 2,
      // The store did not answer: the keys loaded last stay in force until it does (nothing to log
      // twice a second through an outage the store's own errors already report).
      pass: () => this.fresh(0).catch(() => {}),
      logger: { warn: () => {} },
      unref: true,
    });
  }

  /** Loads the keys, then re-reads them twice a second in the background (requests never wait for it). */
  async start(): Promise<void> {
    await this.fresh(0);
    // A revocation anywhere reaches this ring at once; the refresh below is what makes it certain.
    this.unsubscribe = this.store.onChange(() => {
      this.fresh(0).catch(() => {});
    });
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.loop.stop();
  }

  /** Told the ids of the active keys after every read (what holds a revoked key's resources lets go). */
  onChange(listener: (active: ReadonlySet<string>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether any key is active, as of the last read (at most about a second old once started). */
  get enabledNow(): boolean {
    return this.keys.size > 0;
  }

  /** Whether any key is active: when none is, the service is open (loopback or --insecure). */
  async enabled(): Promise<boolean> {
    await this.fresh(REFRESH_MS);
    return this.keys.size > 0;
  }

  /** A key known as of the last read; undefined means "ask lookup()" (it may be brand new). */
  known(key: string): Tenant | undefined {
    return this.keys.get(hashKey(key));
  }

  async lookup(key: string): Promise<Tenant | undefined> {
    const hash = hashKey(key);
    await this.fresh(REFRESH_MS);
    const found = this.keys.get(hash);
    if (found) return found;
    // A key created a moment ago by the CLI: look again, but not on every bad guess.
    await this.fresh(MISS_REFRESH_MS);
    return this.keys.get(hash);
  }

  private async fresh(maxAgeMs: number): Promise<void> {
    if (this.now() - this.loadedAt < maxAgeMs) return;
    this.loading ??= this.store
      .active()
      .then((rows) => {
        this.keys = new Map([...rows].map(([hash, row]) => [hash, { keyId: row.id, role: row.role }]));
        this.loadedAt = this.now();
        if (this.listeners.size > 0) {
          const active = new Set([...this.keys.values()].map((t) => t.keyId));
          for (const listener of this.listeners) {
            try {
              listener(active);
            } catch {
              // A listener's failure must not fail the key read that every request relies on.
            }
          }
        }
      })
      .finally(() => {
        this.loading = undefined;
      });
    await this.loading;
  }
}
