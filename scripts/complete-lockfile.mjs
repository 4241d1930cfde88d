#!/usr/bin/env node
// Completes package-lock.json after `npm install`: the registry reachable from our machines does not
// serve every platform's optional binary package (e.g. @biomejs/cli-android-arm64), so npm leaves
// those out of the lock and `npm ci` then refuses the lock as out of sync. Each missing optional
// package gets an entry with only its version and os/cpu, which npm skips on other platforms
// without fetching. Registry URLs are dropped so the lock names no host.
import { readFileSync, writeFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;

function platformOf(name) {
  const os = /darwin/.test(name)
    ? "darwin"
    : /win32/.test(name)
      ? "win32"
      : /android/.test(name)
        ? "android"
        : "linux";
  const cpu = /arm64/.test(name) ? "arm64" : /ia32/.test(name) ? "ia32" : "x64";
  return { os: [os], cpu: [cpu], ...(/musl/.test(name) ? { libc: ["musl"] } : {}) };
}

let added = 0;
for (const entry of Object.values(packages)) {
  delete entry.resolved;
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (packages[key]) continue;
    packages[key] = { version, ...platformOf(dep), optional: true, ...(entry.dev ? { dev: true } : {}) };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
