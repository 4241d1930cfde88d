// The console's shared parts: the API client, the page element, formatting, tables, and what several pages read (network, custody, members, tokens).

/** Navigation: which visit is current (a late render must not replace a later page), how to route again, and to restart the block feed (a new key). */
export const nav = { visits: 0, route: () => {}, restartFeed: () => {} };

const KEY_STORAGE = "chaingate.apiKey";
export const main = document.getElementById("main");
const notice = document.getElementById("notice");
export let network = { chains: [] };

/** Builds an element; text is always set as text, never parsed as HTML. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function say(text, ok = false) {
  notice.className = ok ? "ok" : "";
  notice.textContent = text;
}

export class ApiError extends Error {}

/** The 401 codes that mean "send an API key" (docs/api.md's error catalogue). */
const KEY_CODES = ["API_KEY_REQUIRED", "API_KEY_INVALID"];

export function key() {
  return sessionStorage.getItem(KEY_STORAGE) ?? "";
}

export async function api(path, { method = "GET", body, query = "" } = {}) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key()) headers.authorization = `Bearer ${key()}`;
  const response = await fetch(`${path}${query}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  // Only a missing or refused API key replaces the page with the key prompt; any other 401 (a wrong
  // wallet password) is the action's own error, shown beside the form that keeps what was typed.
  const code = json?.code ?? json?.error?.data?.code;
  if (response.status === 401 && (code === undefined || KEY_CODES.includes(code))) {
    askForKey(json?.detail ?? "An API key is needed.");
    throw new ApiError(`${code ?? "UNAUTHORIZED"}: ${json?.detail ?? "API key needed"}`);
  }
  if (response.status >= 400) throw new ApiError(`${json?.code ?? response.status}: ${json?.detail ?? text}`);
  if (json && typeof json === "object" && "error" in json && json.jsonrpc) {
    const error = json.error;
    throw new ApiError(`${error.data?.code ?? error.code}: ${error.message}`);
  }
  return json && typeof json === "object" && "jsonrpc" in json ? json.result : json;
}

/** A Members / Token Management / Transactions operation: a JSON-RPC envelope with one params object. */
export const operation = (path, params) =>
  api(`/${path}`, { method: "POST", body: { jsonrpc: "2.0", id: 1, params: [params] } });
export const rpc = (method, params, chainId) =>
  api(`/${method}`, {
    method: "POST",
    body: { jsonrpc: "2.0", id: 1, params },
    query: chainId ? `?chain_id=${chainId}` : "",
  });

function askForKey(reason) {
  const form = document.getElementById("key-form").content.cloneNode(true);
  main.replaceChildren(h("p", {}, reason), form);
  document.getElementById("key").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY_STORAGE, new FormData(event.target).get("key"));
    nav.restartFeed();
    nav.route();
  });
  document.getElementById("key-input").focus();
}

/**
 * The one amount rule: whole units with the symbol in the cell (100 OPS, 0.5 ETH), the base units
 * on hover. Without known decimals (an ERC721 id count, a token chaingate did not create) the
 * number is shown as it is, named as base units.
 */
export function amountCell(base, { decimals, symbol } = {}, attributes = {}) {
  if (base === null || base === undefined || base === "") return h("td", attributes, "");
  const units = BigInt(base);
  const known = decimals !== undefined && symbol !== undefined;
  return h(
    "td",
    {
      class: "number",
      title: `${units.toLocaleString("en-US")} base units`,
      "data-base-units": units.toString(),
      ...attributes,
    },
    known ? `${formatUnits(units, decimals)} ${symbol}` : `${units.toLocaleString("en-US")} base units`,
  );
}

/** Wei as an amount cell (ETH, the wei on hover). */
export const etherCell = (wei, attributes = {}) =>
  amountCell(BigInt(wei ?? 0), { decimals: 18, symbol: "ETH" }, attributes);

/** The one time format: local date and 24-hour time to the second; the ISO time and how long ago on hover. */
export function formatTime(iso) {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return "";
  const two = (n) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

/** A <time> in the one format: the date and the clock each kept whole, the ISO time and age on hover. */
export function timeOf(iso) {
  const text = new Date(iso).toISOString();
  const [date, clock] = formatTime(text).split(" ");
  return h(
    "time",
    { datetime: text, title: `${text} (${age(text)} ago)` },
    h("span", { class: "nowrap" }, date),
    " ",
    h("span", { class: "nowrap" }, clock),
  );
}

export function timeCell(iso, prefix = "") {
  if (!iso) return h("td", {}, "");
  return h("td", { class: "time" }, prefix, timeOf(iso));
}

export function age(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/** A long hex value shortened to its ends; the whole is in the title (hover) and the copy button. */
export function short(value) {
  const text = String(value);
  // 0x and six digits, then the last four: enough to tell addresses apart at a glance, narrow enough
  // that a table of several hashes fits a 1280 px page.
  return text.length > 16 ? `${text.slice(0, 8)}…${text.slice(-4)}` : text;
}

async function copy(value) {
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    // No clipboard permission (a plain-HTTP origin, a locked-down browser): copy from a selection.
    const area = h("textarea", { "aria-hidden": "true" }, value);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  say(`Copied ${value}`, true);
}

export function hashCell(value, attributes = {}) {
  if (value === null || value === undefined || value === "") return h("td", attributes, "");
  const text = String(value);
  return h(
    "td",
    { class: "hash", ...attributes },
    h("code", { title: text, "data-full": text }, short(text)),
    h(
      "button",
      {
        type: "button",
        class: "copy",
        title: `Copy ${text}`,
        "aria-label": `Copy ${text}`,
        onclick: () => copy(text),
      },
      "copy",
    ),
  );
}

/** Base units as a decimal with the token's decimals (ERC20), or as they are (ids, unknown decimals). */
export function formatUnits(value, decimals) {
  if (value === null || value === undefined) return "";
  const amount = BigInt(value);
  // Whole units grouped by thousands (1,000,000), the fraction exact with its trailing zeros dropped.
  if (!decimals) return amount.toLocaleString("en-US");
  const scale = 10n ** BigInt(decimals);
  const fraction = (amount % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${(amount / scale).toLocaleString("en-US")}${fraction ? `.${fraction}` : ""}`;
}

/** An error in a table: one line, cut with an ellipsis; the whole text on hover and for screen readers. */
export function errorCell(text, title) {
  if (!text) return h("td", {}, "");
  return h("td", { class: "error", title: title ? `${text}\n${title}` : text }, text);
}

export function stateCell(state) {
  const ok = ["confirmed", "mined", "delivered", "ACTIVE"].includes(state);
  // Held transports need the operator: their source chain's nodes disagree, or the source left the chain.
  const bad = ["failed", "dropped", "SUSPENDED", "awaiting_quorum", "reorged"].includes(state);
  return h("td", { class: ok ? "state-ok" : bad ? "state-bad" : "state-wait", "data-state": state }, state);
}

/** A table in a box that scrolls sideways when its columns are wider than the page: cells never break a word. */
export function table(caption, columns, rows, attributes = {}) {
  return h("div", { class: "table-scroll" }, tableOnly(caption, columns, rows, attributes));
}

function tableOnly(caption, columns, rows, attributes) {
  return h(
    "table",
    attributes,
    h("caption", {}, caption),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h("tbody", {}, rows.length ? rows : [h("tr", {}, h("td", { colspan: columns.length }, "none"))]),
  );
}

export async function loadNetwork() {
  network = await api("/network");
  return network;
}

// ---- Shared lists: custody addresses, members, tokens ----

export let custody = [];
export let members = [];
export let tokens = [];

export async function loadCustody() {
  custody = await api("/wallet");
  return custody;
}

export async function loadMembers() {
  members = await operation("list_all_members", {});
  return members;
}

/** Tokens chaingate created (its own transfers of kind create_*; each names its contract in `details.token`). */
export async function loadTokens() {
  const created = [];
  for (const kind of ["create_new_ERC20_token", "create_new_ERC721_token"]) {
    const { transfers } = await operation("list_all_transfers", { kind, limit: 100 });
    created.push(...transfers.filter((t) => ["mined", "confirmed"].includes(t.state) && t.details?.token));
  }
  tokens = created.map((t) => ({
    address: t.details.token,
    chain_id: t.chain_id,
    standard: t.kind === "create_new_ERC20_token" ? "ERC20" : "ERC721",
    symbol: t.details.symbol ?? "?",
    name: t.details.name ?? "",
    decimals: t.kind === "create_new_ERC20_token" ? (t.details.decimals ?? 18) : 0,
  }));
  return tokens;
}

/** The decimals and symbol of an ERC20 chaingate created (the amount rule needs them); none for others. */
export function unitsOf(address) {
  const token = tokens.find((t) => t.address.toLowerCase() === String(address ?? "").toLowerCase());
  return token?.standard === "ERC20" ? { decimals: token.decimals, symbol: token.symbol } : {};
}

/**
 * balanceOf(owner) of a token on a chain, read with eth_call (0x70a08231 is the selector of
 * balanceOf(address)). A token has the same address on every chain it is transported to; where it
 * has no code yet the call answers "0x", a zero balance.
 */
export async function tokenBalance(token, owner, chainId = token.chain_id) {
  const data = `0x70a08231${owner.slice(2).toLowerCase().padStart(64, "0")}`;
  const answer = await rpc("eth_call", [{ to: token.address, data }, "latest"], chainId);
  return BigInt(answer === "0x" ? 0 : answer);
}
