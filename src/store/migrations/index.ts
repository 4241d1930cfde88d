/** The ordered list of migrations; names sort in the order they must run. */
import type { Migration } from "kysely";
import * as filters from "./001-filters.js";

export const MIGRATIONS: Record<string, Migration> = {
  "001-filters": filters,
};
