/** The guard's memory of wallet and key pairs without policies: what admitLater answers, and its bound. */
import { expect, it } from "vitest";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import { MAX_UNPOLICED, PolicyGuard, type SigningRequest } from "./policy-guard.js";
import { PolicyStore } from "./policy-store.js";

describeEachStore("PolicyGuard.admitLater", (target) => {
  const opened = suiteStore(target);

  const request = (walletId: string): SigningRequest => ({
    apiKeyId: null,
    walletId,
    address: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    chainId: 1001,
    operation: "transfer",
    to: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
    value: 1n,
    data: "0x",
    gas: 21_000n,
    feePerGas: 1n,
  });

  it(`answers only for pairs read with no policy, and keeps at most ${MAX_UNPOLICED} of them`, async () => {
    const guard = new PolicyGuard({ store: opened.store, policies: new PolicyStore(opened.store) });
    expect(guard.admitLater(request("w0"))).toBeUndefined();
    await guard.admit(request("w0"));
    expect(guard.admitLater(request("w0"))).toMatchObject({ limits: [], unread: true });
    // Filled to the bound by pairs a caller could make (a wallet each), in turns of 500 reads.
    for (let from = 1; from < MAX_UNPOLICED; from += 500)
      await Promise.all(
        Array.from({ length: Math.min(500, MAX_UNPOLICED - from) }, (_, i) =>
          guard.admit(request(`w${from + i}`)),
        ),
      );
    expect(guard.admitLater(request("w0"))).toBeDefined();
    expect(guard.admitLater(request(`w${MAX_UNPOLICED - 1}`))).toBeDefined();
    // One more: the memory starts again rather than grow (each forgotten pair is read once more).
    await guard.admit(request(`w${MAX_UNPOLICED}`));
    expect(guard.admitLater(request("w0"))).toBeUndefined();
    expect(guard.admitLater(request(`w${MAX_UNPOLICED}`))).toBeDefined();
  });
});
