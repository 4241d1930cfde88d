import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ARTIFACTS_FILE, compileContracts } from "./compile-contracts.js";

it("the committed artifacts are exactly what solc makes of contracts/ (run `npm run contracts` after a change)", () => {
  expect(compileContracts()).toBe(readFileSync(ARTIFACTS_FILE, "utf8"));
}, 120_000);
