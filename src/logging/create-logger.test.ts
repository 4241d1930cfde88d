import { expect, it } from "vitest";
import { createLogger } from "./create-logger.js";

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
