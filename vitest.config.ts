import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["src/test-support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file starts its own anvil chains; two at a time fits a 2-core machine.
    maxWorkers: 2,
    reporters: ["default", "./src/test-support/summary-reporter.ts"],
  },
});
