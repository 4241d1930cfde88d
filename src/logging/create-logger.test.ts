import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createLogger, redactUrl } from "./create-logger.js";

it("redacts secrets at the top level and nested, whatever the object is called", () => {
  const lines: string[] = [];
  const logger = createLogger("info", { write: (line: string) => void lines.push(line) });
  logger.info({
    password: "p1",
    body: { mnemonic: "m1", keep: "visible" },
    req: { headers: { authorization: "Bearer k1" } },
  });
  logger.info(
    { wallet: { keystore: "ks1" }, privateKey: "0xabc", operator_key: "0xdef", api_key: "cg_1" },
    "done",
  );
  const text = lines.join("\n");
  for (const secret of ["p1", "m1", "Bearer k1", "ks1", "0xabc", "0xdef", "cg_1"])
    expect(text).not.toContain(`"${secret}"`);
  expect(text).toContain("visible");
  expect(text).toContain("[redacted]");
});

describe("request URLs in logs", () => {
  it("never carry the value of a secret-looking query parameter", () => {
    expect(redactUrl("/eth_chainId?api_key=s3cret&chain_id=1001")).toBe(
      "/eth_chainId?api_key=[redacted]&chain_id=1001",
    );
    expect(redactUrl("/x?token=a&Authorization=b&sig=c")).toBe(
      "/x?token=[redacted]&Authorization=[redacted]&sig=[redacted]",
    );
    expect(redactUrl("/plain")).toBe("/plain");
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-zA-Z0-9]{8,20}$/),
        fc.constantFrom("api_key", "apikey", "key", "access_token"),
        (secret, name) => {
          return !redactUrl(`/eth_chainId?chain_id=1&${name}=${secret}`).includes(secret);
        },
      ),
    );
  });
});
