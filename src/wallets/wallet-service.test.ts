import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KdfParams, KeyDeriver } from "../keys/kdf.js";
import { UnlockCache } from "../keys/unlock-cache.js";
import { openStore, type Store } from "../store/database.js";
import { type TempStore, tempStore } from "../test-support/stores.js";
import { WalletService } from "./wallet-service.js";

class CountingDeriver extends KeyDeriver {
  calls = 0;
  override derive(password: string, params: KdfParams): Promise<Buffer> {
    this.calls++;
    return super.derive(password, params);
  }
}

describe("wallet service", () => {
  let temp: TempStore;
  let store: Store;
  let now = 1_000_000;
  const deriver = new CountingDeriver(2);
  const cache = new UnlockCache(60_000, () => now);
  let service: WalletService;

  beforeAll(async () => {
    temp = await tempStore("sqlite");
    store = await openStore(temp.location);
    service = new WalletService({ store, deriver, cache, kdf: "light", maxAddresses: 100, now: () => now });
  });
  afterAll(async () => {
    await store.close();
    await temp.drop();
  });

  it("creating a wallet costs one key derivation whatever its size", async () => {
    const before = deriver.calls;
    await service.create({ type: "KEYSTORE_V3", password: "pw", addressQuantity: 20 });
    expect(deriver.calls - before).toBe(1);
  });

  it("a second unlock with the right password within the cache time costs no derivation; after it, one", async () => {
    const [record] = await service.create({ type: "KEYSTORE_V3", password: "pw", addressQuantity: 1 });
    cache.delete(record!.id);
    const start = deriver.calls;
    await service.unlock(record!.id, 0, "pw");
    expect(deriver.calls - start).toBe(1);
    await service.unlock(record!.id, 0, "pw");
    expect(deriver.calls - start).toBe(1);
    // A different (wrong) password is never answered from the cache.
    await expect(service.unlock(record!.id, 0, "PW")).rejects.toMatchObject({ code: "WRONG_PASSWORD" });
    expect(deriver.calls - start).toBe(2);
    now += 61_000;
    await service.unlock(record!.id, 0, "pw");
    expect(deriver.calls - start).toBe(3);
  });

  it("an address's signer is opened once per unlock-cache entry and reused after", async () => {
    const [record] = await service.create({ type: "KEYSTORE_V3", password: "pw", addressQuantity: 2 });
    const first = await service.unlock(record!.id, 1, "pw");
    const again = await service.unlock(record!.id, 1, "pw");
    expect(again.account).toBe(first.account);
    expect(again.address).toBe(first.account.address);
    // Another password never gets the opened signer.
    await expect(service.unlock(record!.id, 1, "not-pw")).rejects.toMatchObject({ code: "WRONG_PASSWORD" });
  });

  it("a cached signer is answered without reading the store, and still only to the wallet's own tenant", async () => {
    const [record] = await service.create(
      { type: "KEYSTORE_V3", password: "pw", addressQuantity: 1 },
      "tenant-a",
    );
    const first = await service.unlock(record!.id, 0, "pw", "tenant-a");
    // The store is closed to this service from here on: a read would throw.
    const closed = new WalletService({
      store: { ...store, db: undefined as never },
      deriver,
      cache,
      kdf: "light",
      maxAddresses: 100,
      now: () => now,
    });
    const again = await closed.unlock(record!.id, 0, "pw", "tenant-a");
    expect(again.account).toBe(first.account);
    expect(again.address).toBe(first.address);
    await expect(closed.unlock(record!.id, 0, "pw", "tenant-b")).rejects.toMatchObject({
      code: "WALLET_NOT_FOUND",
    });
    // The operator (no tenant) reaches every wallet, as through the store.
    expect((await closed.unlock(record!.id, 0, "pw")).account).toBe(first.account);
  });

  it("a locked wallet refuses guesses without running the KDF", async () => {
    const [record] = await service.create({ type: "KEYSTORE_V3", password: "pw", addressQuantity: 1 });
    cache.delete(record!.id);
    for (let i = 0; i < 6; i++) await service.unlock(record!.id, 0, `bad${i}`).catch(() => {});
    const before = deriver.calls;
    const attempts = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        service.unlock(record!.id, 0, `guess${i}`).catch((e: { code: string }) => e.code),
      ),
    );
    expect(new Set(attempts)).toEqual(new Set(["WALLET_LOCKED"]));
    expect(deriver.calls).toBe(before);
  });
});
