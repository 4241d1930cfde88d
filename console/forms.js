// The action forms' parts: fields, pickers and the form that confirms and submits.
import { ApiError, custody, h, members, network, short, tokens } from "./lib.js";

// ---- Actions ----

export function field(form, name, label, attributes = {}) {
  const id = `${form}-${name}`;
  return [h("label", { for: id }, label), h("input", { id, name, ...attributes })];
}

export function passwordField(form) {
  return field(form, "password", "Wallet password", {
    type: "password",
    required: true,
    autocomplete: "off",
  });
}

export function chainSelect(form, name, label, selected) {
  const id = `${form}-${name}`;
  return [
    h("label", { for: id }, label),
    h(
      "select",
      { id, name },
      network.chains.map((c) =>
        h(
          "option",
          { value: c.chain_id, selected: String(c.chain_id) === String(selected ?? "") },
          `${c.chain_id}${c.home ? " (home)" : ""}`,
        ),
      ),
    ),
  ];
}

/** A chain other than `source`, preferring one where a member is registered (where transports may go). */
export function otherChain(source) {
  const others = network.chains.map((c) => c.chain_id).filter((id) => String(id) !== String(source));
  const withMember = others.find((id) => members.some((m) => m.chain_id === id && m.status === "ACTIVE"));
  return withMember ?? others[0];
}

/** Keeps a destination select off its form's source chain: when the source moves onto it, it moves away. */
function followSource(form) {
  const source = form.querySelector("[name=chain_id]");
  const destination = form.querySelector("[name=destination_chain_id]");
  if (!source || !destination) return;
  source.addEventListener("change", () => {
    if (destination.value === source.value) destination.value = String(otherChain(source.value));
  });
}

export function homeChain() {
  return network.chains.find((c) => c.home)?.chain_id;
}

const walletLabel = (r) => `${short(r.address)} · wallet ${r.id.slice(0, 8)}… #${r.index}`;

/** A select of every custody address (value wallet:index), optionally with "every address" per wallet. */
export function addressPicker(form, { everyAddress = false } = {}) {
  const id = `${form}-signer`;
  const options = [];
  for (const r of custody) {
    if (everyAddress && r.index === 0) {
      options.push(h("option", { value: `${r.id}:*` }, `every address of wallet ${r.id.slice(0, 8)}…`));
    }
    options.push(h("option", { value: `${r.id}:${r.index}`, "data-address": r.address }, walletLabel(r)));
  }
  return [
    h("label", { for: id }, everyAddress ? "Address" : "Signing address"),
    h(
      "select",
      { id, name: "signer", required: true },
      options.length ? options : [h("option", { value: "" }, "no wallets yet: create one first")],
    ),
  ];
}

export function walletPicker(form) {
  const id = `${form}-wallet_id`;
  const wallets = custody.filter((r) => r.index === 0);
  return [
    h("label", { for: id }, "Wallet"),
    h(
      "select",
      { id, name: "wallet_id", required: true },
      wallets.length
        ? wallets.map((r) =>
            h(
              "option",
              { value: r.id },
              `wallet ${r.id.slice(0, 8)}… (${custody.filter((c) => c.id === r.id).length} addresses, first ${short(r.address)})`,
            ),
          )
        : [h("option", { value: "" }, "no wallets yet: create one first")],
    ),
  ];
}

export function pickedAddress(values) {
  const [wallet_id, index] = String(values.signer).split(":");
  return { wallet_id, index: index === "*" ? undefined : Number(index) };
}

/** A text input that also offers the known addresses (tokens, custody addresses, members' owners). */
export function addressField(form, name, label, listId, attributes = {}) {
  return field(form, name, label, {
    list: listId,
    required: true,
    pattern: "0x[0-9a-fA-F]{40}",
    placeholder: "0x… (pick or paste)",
    autocomplete: "off",
    ...attributes,
  });
}

export function datalists() {
  return [
    h(
      "datalist",
      { id: "known-tokens" },
      tokens.map((t) => h("option", { value: t.address }, `${t.symbol} (${t.standard}) on ${t.chain_id}`)),
    ),
    h(
      "datalist",
      { id: "known-addresses" },
      custody.map((r) =>
        h("option", { value: r.address }, `custody: wallet ${r.id.slice(0, 8)}… #${r.index}`),
      ),
      members.map((m) => h("option", { value: m.owner }, `member ${m.name} (chain ${m.chain_id})`)),
    ),
  ];
}

/**
 * Each form's last answer, by form id: a form drawn again (the Wallets page re-renders after an
 * unlock) shows it still. Cleared when the operator goes to another page.
 */
const answers = new Map();

export function forgetAnswers() {
  answers.clear();
}

/** Transaction hashes and transport ids an answer names, for links to their records. */
function recordsIn(result) {
  const found = { hashes: new Set(), transports: new Set() };
  const visit = (value, key) => {
    if (Array.isArray(value)) for (const item of value) visit(item, key);
    else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) visit(v, k);
    else if (typeof value === "string" && /tx_hash$/.test(key ?? "") && /^0x[0-9a-f]{64}$/i.test(value))
      found.hashes.add(value);
    else if (typeof value === "string" && key === "transport_id") found.transports.add(value);
  };
  visit(result);
  return found;
}

/** A record an answer made, shortened, with a link to its row on the Transfers page. */
function recordLink(kind, value, query) {
  return h(
    "li",
    {},
    `${kind} `,
    h("code", { title: value }, short(value)),
    " ",
    h("a", { href: `#/activity?${query}` }, "see its record"),
  );
}

/** The answer's text: what happened, links to the records it made, the whole answer folded. */
function answerParts(legend, answer) {
  if (answer.state === "working") return [`${legend}: working…`];
  if (answer.state === "failed") return [`${legend} failed. ${answer.message}`];
  const { hashes, transports } = recordsIn(answer.result);
  const links = [
    ...[...hashes].map((hash) => recordLink("Transaction", hash, `tx=${hash}`)),
    ...[...transports].map((id) => recordLink("Transport", id, `transport=${id}`)),
  ];
  return [
    `${legend}: done.`,
    links.length ? h("ul", {}, links) : null,
    h(
      "details",
      {},
      h("summary", {}, "The whole answer"),
      h("pre", { class: "answer" }, JSON.stringify(answer.result, null, 2)),
    ),
  ];
}

/** Shows the form's answer in its own place under its button, scrolled into view and focused. */
function paint(id, legend, focus) {
  const place = document.getElementById(`${id}-result`);
  const answer = answers.get(id);
  if (!place || !answer) return;
  place.className = `result${answer.state === "done" ? " ok" : answer.state === "working" ? " working" : ""}`;
  place.setAttribute("role", answer.state === "failed" ? "alert" : "status");
  place.replaceChildren(...answerParts(legend, answer).filter(Boolean));
  if (focus) {
    place.scrollIntoView({ block: "nearest" });
    place.focus({ preventScroll: true });
  }
}

export function actionForm(id, legend, fields, confirmText, submit) {
  const result = h("div", { class: "result", id: `${id}-result`, tabindex: "-1", "aria-live": "polite" });
  const form = h("form", { class: "action", id }, ...fields, h("button", { type: "submit" }, legend), result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form));
    if (!confirm(confirmText(values))) return;
    answers.set(id, { state: "working" });
    paint(id, legend, false);
    try {
      const answer = await submit(values);
      // A done action starts its form over (the password first of all), so nothing of it is sent twice by mistake.
      form.reset();
      answers.set(id, { state: "done", result: answer });
    } catch (error) {
      // What was typed stays, to be corrected and sent again.
      answers.set(id, { state: "failed", message: error.message });
    }
    paint(id, legend, true);
  });
  followSource(form);
  queueMicrotask(() => paint(id, legend, false));
  return h("fieldset", {}, h("legend", {}, legend), form);
}

export const signer = (values) => {
  const { wallet_id, index } = pickedAddress(values);
  return { wallet_id, index, password: values.password };
};
export const signerFields = (form) => [...addressPicker(form), ...passwordField(form)];

/** Either an amount (ERC20) or a token id (ERC721), whichever was filled in. */
export function amountOrId(values) {
  if (values.token_id) return { token_id: values.token_id };
  return { amount: values.amount };
}
export const amountFields = (form) => [
  ...field(form, "amount", "Amount (ERC20, base units)", { inputmode: "numeric", pattern: "[0-9]+" }),
  ...field(form, "token_id", "or token id (ERC721)", { inputmode: "numeric", pattern: "[0-9]+" }),
];
export const what = (v) => (v.token_id ? `token id ${v.token_id}` : `${v.amount} base units`);

/** The JSON a field holds, or undefined when it is empty; a parse error names the field. */
export function jsonField(values, name, label) {
  if (!values[name]) return undefined;
  try {
    return JSON.parse(values[name]);
  } catch {
    throw new ApiError(`${label} is not valid JSON`);
  }
}
