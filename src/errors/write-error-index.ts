/** `npm run docs:errors`: rewrites the error code index in docs/api.md from the catalogue. */
import { readFileSync, writeFileSync } from "node:fs";
import { withErrorIndex } from "./error-index.js";

const path = new URL("../../docs/api.md", import.meta.url);
writeFileSync(path, withErrorIndex(readFileSync(path, "utf8")));
