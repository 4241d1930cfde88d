// The Activity page: transfers and transports, paged, with the stuck ones first.
import {
  amountCell,
  errorCell,
  etherCell,
  h,
  hashCell,
  loadTokens,
  main,
  nav,
  operation,
  short,
  stateCell,
  table,
  timeCell,
  timeOf,
  unitsOf,
} from "./lib.js";

// ---- Transfers and transports ----

const STUCK_MS = 60_000;
export const PAGE_SIZE = 25;
function interesting(filter, state, updatedAt) {
  if (filter === "failed") return ["failed", "dropped", "awaiting_quorum", "reorged"].includes(state);
  if (filter === "stuck")
    return ["queued", "sent", "delivering"].includes(state) && Date.now() - Date.parse(updatedAt) > STUCK_MS;
  return true;
}

/** Where each list is: the cursors of the pages before (a stack), and the cursor of this one. */
export const pages = {
  transports: { before: [], cursor: undefined },
  transfers: { before: [], cursor: undefined },
  audit: { before: [], cursor: undefined },
};

export function pager(list, nextCursor) {
  const at = pages[list];
  const go = (cursor, before) => {
    pages[list] = { cursor, before };
    nav.route();
  };
  return h(
    "nav",
    { class: "pager", "aria-label": `${list} pages`, id: `${list}-pager` },
    h(
      "button",
      {
        type: "button",
        disabled: at.before.length === 0,
        onclick: () => go(at.before.at(-1), at.before.slice(0, -1)),
      },
      "← Newer",
    ),
    h("span", {}, `Page ${at.before.length + 1}`),
    h(
      "button",
      {
        type: "button",
        disabled: nextCursor === null,
        onclick: () => go(nextCursor, [...at.before, at.cursor]),
      },
      "Older →",
    ),
  );
}

/** What a transfer moved: ether for plain sends, the token amount or id for token operations. */
function movedCell(t) {
  const marked = { "data-value": "" };
  const d = t.details ?? {};
  if (d.amount !== undefined) return amountCell(d.amount, unitsOf(d.token), marked);
  if (d.token_id !== undefined) return h("td", { class: "number", ...marked }, `token id ${d.token_id}`);
  if (d.initial_supply !== undefined)
    return amountCell(d.initial_supply, { decimals: d.decimals ?? 18, symbol: d.symbol ?? "" }, marked);
  return t.value && t.value !== "0" ? etherCell(t.value, marked) : h("td", marked, "");
}

function transportAmountCell(t) {
  if (t.amount !== null && t.amount !== undefined) return amountCell(t.amount, unitsOf(t.token));
  return h(
    "td",
    { class: "number" },
    t.token_id ? `token id ${t.token_id}` : t.payload_hash ? "message" : "",
  );
}

/** The row an action's answer linked to (#/activity?tx=0x… or ?transport=…), marked and scrolled to once. */
let scrolledTo = "";
function picked() {
  const query = new URLSearchParams(location.hash.split("?")[1] ?? "");
  return { tx: query.get("tx")?.toLowerCase(), transport: query.get("transport") };
}
function scrollToPicked() {
  const row = main.querySelector("tr.picked");
  if (!row || scrolledTo === location.hash) return;
  scrolledTo = location.hash;
  row.scrollIntoView({ block: "center" });
}

export async function renderActivity(filter = "all") {
  const visit = nav.visits;
  const cursorOf = (list) => (pages[list].cursor === undefined ? {} : { cursor: pages[list].cursor });
  const [{ transfers, next_cursor: nextTransfers }, { transports, next_cursor: nextTransports }] =
    await Promise.all([
      operation("list_all_transfers", { limit: PAGE_SIZE, ...cursorOf("transfers") }),
      operation("list_all_transports", { limit: PAGE_SIZE, ...cursorOf("transports") }),
      loadTokens(),
    ]);
  const pick = picked();
  const select = h(
    "select",
    { id: "activity-filter", onchange: (event) => renderActivity(event.target.value) },
    ["all", "stuck", "failed"].map((value) =>
      h(
        "option",
        { value, selected: value === filter },
        value === "stuck" ? "stuck (pending over 1 min)" : value === "failed" ? "failed or held" : value,
      ),
    ),
  );
  if (visit !== nav.visits) return; // another page was asked for meanwhile: it owns main now
  main.replaceChildren(
    h("h2", {}, "Transfers and transports"),
    h(
      "p",
      {},
      h("label", { for: "activity-filter" }, "Show "),
      select,
      ` (${PAGE_SIZE} a page, newest first)`,
    ),
    table(
      "Transports between chains",
      [
        "Id",
        "Kind",
        "From chain",
        "To chain",
        "Amount / id",
        "State",
        "Source tx",
        "Destination tx",
        "Created",
        "Error",
        "Refund",
      ],
      transports
        .filter((t) => interesting(filter, t.state, t.updated_at))
        .map((t) =>
          h(
            "tr",
            { "data-transport": t.id, class: pick.transport === t.id ? "picked" : undefined },
            hashCell(t.id),
            h("td", {}, t.kind),
            h("td", {}, t.source_chain_id),
            h("td", {}, t.destination_chain_id),
            transportAmountCell(t),
            t.state === "queued" && t.release_at
              ? h(
                  "td",
                  {
                    class: "state-wait",
                    "data-state": t.state,
                    title: t.refund_at ? `refunded at ${t.refund_at}` : "",
                  },
                  "queued until ",
                  timeOf(t.release_at),
                )
              : stateCell(t.state),
            hashCell(t.source_tx_hash),
            hashCell(t.destination_tx_hash),
            timeCell(t.created_at),
            errorCell(t.error, t.revert_data),
            t.refund_state
              ? h(
                  "td",
                  {},
                  `${t.refund_state} `,
                  t.refund_tx_hash ? h("code", { title: t.refund_tx_hash }, short(t.refund_tx_hash)) : "",
                )
              : h("td", {}, ""),
          ),
        ),
      { id: "transports" },
    ),
    pager("transports", nextTransports),
    table(
      "Transactions signed by chaingate",
      ["Kind", "Chain", "From", "To", "Value", "Nonce", "State", "Transaction", "Created", "Error"],
      transfers
        .filter((t) => interesting(filter, t.state, t.updated_at))
        .map((t) =>
          h(
            "tr",
            { "data-transfer": t.tx_hash, class: pick.tx === t.tx_hash.toLowerCase() ? "picked" : undefined },
            h("td", {}, t.kind),
            h("td", {}, t.chain_id),
            hashCell(t.from),
            t.to ? hashCell(t.to) : h("td", {}, "(deploy)"),
            movedCell(t),
            h("td", { class: "number" }, t.nonce),
            stateCell(t.state),
            hashCell(t.tx_hash),
            timeCell(t.created_at),
            errorCell(t.error),
          ),
        ),
      { id: "transfers" },
    ),
    pager("transfers", nextTransfers),
  );
  scrollToPicked();
}
