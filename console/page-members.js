// The Members page.
import { h, hashCell, loadMembers, main, members, nav, stateCell, table, timeCell } from "./lib.js";

// ---- Members ----

export async function renderMembers() {
  const visit = nav.visits;
  await loadMembers();
  if (visit !== nav.visits) return; // another page was asked for meanwhile: it owns main now
  main.replaceChildren(
    h("h2", {}, "Members"),
    table(
      "Registered members (from the registry contract on the home chain)",
      ["Id", "Name", "Chain", "Role", "Status", "Owner", "Registered", "Transaction"],
      members.map((m) =>
        h(
          "tr",
          {},
          h("td", {}, m.id),
          h("td", {}, m.name),
          h("td", {}, m.chain_id),
          h("td", {}, m.role),
          stateCell(m.status),
          hashCell(m.owner),
          timeCell(m.created_at),
          hashCell(m.tx_hash),
        ),
      ),
    ),
  );
}
