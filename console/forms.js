// The action forms' parts: fields, pickers and the form that confirms and submits.
import { ApiError, custody, h, members, network, say, short, tokens } from "./lib.js";

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

export function actionForm(id, legend, fields, confirmText, submit) {
  const form = h("form", { class: "action", id }, ...fields, h("button", { type: "submit" }, legend));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form));
    if (!confirm(confirmText(values))) return;
    say("Working…", true);
    try {
      const result = await submit(values);
      say(`${legend}: done.\n${JSON.stringify(result, null, 2)}`, true);
      // A done action starts its form over (the password first of all), so nothing of it is sent twice by mistake.
      form.reset();
    } catch (error) {
      say(`${legend} failed. ${error.message}`);
    }
  });
  followSource(form);
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
