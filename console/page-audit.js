// The Audit page: the signing decisions and changes in the audit log.
import {
  amountCell,
  api,
  etherCell,
  h,
  hashCell,
  loadTokens,
  main,
  nav,
  table,
  timeCell,
  unitsOf,
} from "./lib.js";
import { PAGE_SIZE, pager, pages } from "./page-activity.js";

// ---- Audit ----

/** The audit log (GET /audit): every signing decision and policy or key change; an admin sees all. */
export async function renderAudit(decision = "all") {
  const visit = nav.visits;
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (decision !== "all") query.set("decision", decision);
  if (pages.audit.cursor !== undefined) query.set("cursor", pages.audit.cursor);
  const [{ entries, next_cursor: next }] = await Promise.all([
    api("/audit", { query: `?${query}` }),
    loadTokens(),
  ]);
  const select = h(
    "select",
    {
      id: "audit-decision",
      onchange: (event) => {
        pages.audit = { before: [], cursor: undefined };
        renderAudit(event.target.value);
      },
    },
    ["all", "allowed", "denied", "change"].map((value) =>
      h("option", { value, selected: value === decision }, value),
    ),
  );
  if (visit !== nav.visits) return; // another page was asked for meanwhile: it owns main now
  main.replaceChildren(
    h("h2", {}, "Audit log"),
    h(
      "p",
      {},
      h("label", { for: "audit-decision" }, "Decisions "),
      select,
      ` (${PAGE_SIZE} a page, newest first; policies and their rules: docs/policies-and-webhooks.md)`,
    ),
    table(
      "Signing decisions, policy and key changes",
      [
        "Time",
        "Key",
        "Operation",
        "Decision",
        "Rule",
        "Address",
        "To",
        "Value",
        "Token amount",
        "Transaction",
      ],
      entries.map((e) =>
        h(
          "tr",
          { "data-audit": e.id, "data-decision": e.decision },
          timeCell(e.created_at),
          hashCell(e.api_key_id),
          h("td", {}, e.operation),
          h(
            "td",
            { class: e.decision === "denied" ? "state-bad" : e.decision === "allowed" ? "state-ok" : "" },
            e.decision,
          ),
          h("td", {}, e.rule ?? ""),
          hashCell(e.address),
          hashCell(e.to),
          e.value === null || e.value === undefined ? h("td", {}, "") : etherCell(e.value),
          amountCell(e.token_amount, unitsOf(e.token)),
          hashCell(e.tx_hash),
        ),
      ),
      { id: "audit" },
    ),
    pager("audit", next),
  );
}
