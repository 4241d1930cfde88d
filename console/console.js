// The operator console: a plain page over chaingate's public HTTP API (the same calls any client makes).

const KEY_STORAGE = "chaingate.apiKey";
const main = document.getElementById("main");
const notice = document.getElementById("notice");
let network = { chains: [] };
const blocks = [];
const metricSamples = [];
let refreshTimer;

/** Builds an element; text is always set as text, never parsed as HTML. */
function h(tag, attributes = {}, ...children) {
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

function say(text, ok = false) {
  notice.className = ok ? "ok" : "";
  notice.textContent = text;
}

class ApiError extends Error {}

function key() {
  return sessionStorage.getItem(KEY_STORAGE) ?? "";
}

async function api(path, { method = "GET", body, query = "" } = {}) {
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
  if (response.status === 401) {
    askForKey(json?.detail ?? "An API key is needed.");
    throw new ApiError(`${json?.code ?? "UNAUTHORIZED"}: ${json?.detail ?? "API key needed"}`);
  }
  if (response.status >= 400) throw new ApiError(`${json?.code ?? response.status}: ${json?.detail ?? text}`);
  if (json && typeof json === "object" && "error" in json && json.jsonrpc) {
    const error = json.error;
    throw new ApiError(`${error.data?.code ?? error.code}: ${error.message}`);
  }
  return json && typeof json === "object" && "jsonrpc" in json ? json.result : json;
}

/** A Members / Token Management / Transactions operation: a JSON-RPC envelope with one params object. */
const operation = (path, params) =>
  api(`/${path}`, { method: "POST", body: { jsonrpc: "2.0", id: 1, params: [params] } });
const rpc = (method, params, chainId) =>
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
    startFeed();
    route();
  });
  document.getElementById("key-input").focus();
}

function formatEther(hexWei) {
  const wei = BigInt(hexWei);
  const whole = wei / 10n ** 18n;
  const fraction = ((wei % 10n ** 18n) / 10n ** 14n).toString().padStart(4, "0");
  return `${whole}.${fraction} ETH`;
}

function age(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

function stateCell(state) {
  const ok = ["confirmed", "mined", "delivered", "ACTIVE"].includes(state);
  const bad = ["failed", "dropped", "SUSPENDED"].includes(state);
  return h("td", { class: ok ? "state-ok" : bad ? "state-bad" : "state-wait", "data-state": state }, state);
}

function table(caption, columns, rows, attributes = {}) {
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

async function loadNetwork() {
  network = await api("/network");
  return network;
}

// ---- Network ----

async function renderNetwork() {
  await loadNetwork();
  const chains = network.chains.map((chain) =>
    table(
      `Chain ${chain.chain_id} (${chain.name})${chain.home ? ", home" : ""}: head ${chain.head ?? "unknown"}`,
      ["Upstream", "Health", "Head", "Lag (blocks)", "Latency", "Answered", "Faults"],
      chain.upstreams.map((u) =>
        h(
          "tr",
          { "data-upstream": u.label },
          h("td", { class: "hash" }, u.label),
          h(
            "td",
            {
              class: u.healthy ? "state-ok" : "state-bad",
              "data-health": u.healthy ? "healthy" : "unhealthy",
            },
            u.healthy ? "healthy" : "unhealthy",
          ),
          h("td", {}, u.head ?? "?"),
          h("td", {}, u.lag ?? "?"),
          h("td", {}, u.latency_ms === null ? "?" : `${u.latency_ms} ms`),
          h("td", {}, u.answered),
          h("td", {}, u.faults),
        ),
      ),
      { "data-chain": chain.chain_id },
    ),
  );
  main.replaceChildren(
    h("h2", {}, "Network"),
    ...chains,
    h("h3", {}, "New blocks on the home chain (live, over the WebSocket)"),
    h("ul", { class: "feed", id: "feed", "aria-live": "polite" }, blocks.map(blockLine)),
    h("h3", {}, "Requests and errors per minute (from /metrics)"),
    chart(),
  );
}

function blockLine(block) {
  return h(
    "li",
    {},
    `#${Number.parseInt(block.number, 16)} ${block.hash.slice(0, 18)}… ${block.transactions ?? ""}`,
  );
}

let socket;
function startFeed() {
  socket?.close();
  const protocols = key() ? ["chaingate", `bearer.${key()}`] : ["chaingate"];
  socket = new WebSocket(`${location.origin.replace(/^http/, "ws")}/ws`, protocols);
  socket.addEventListener("open", () =>
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] })),
  );
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.method !== "eth_subscription") return;
    blocks.unshift(message.params.result);
    blocks.length = Math.min(blocks.length, 20);
    document.getElementById("feed")?.prepend(blockLine(message.params.result));
  });
}

async function sampleMetrics() {
  try {
    const headers = key() ? { authorization: `Bearer ${key()}` } : {};
    const text = await (await fetch("/metrics", { headers })).text();
    let requests = 0;
    let errors = 0;
    for (const line of text.split("\n")) {
      const match = /^chaingate_http_requests_total\{([^}]*)\} (\d+(?:\.\d+)?)/.exec(line);
      if (!match) continue;
      const value = Number(match[2]);
      requests += value;
      if (/status="[45]\d\d"/.test(match[1])) errors += value;
    }
    metricSamples.push({ at: Date.now(), requests, errors });
    if (metricSamples.length > 61) metricSamples.shift();
  } catch {
    // The chart shows what it has; the next sample tries again.
  }
}

/** Per-minute rates between consecutive samples, as bars: requests (outlined) and errors (filled). */
function chart() {
  const rates = [];
  for (let i = 1; i < metricSamples.length; i++) {
    const [a, b] = [metricSamples[i - 1], metricSamples[i]];
    const minutes = (b.at - a.at) / 60_000;
    rates.push({ requests: (b.requests - a.requests) / minutes, errors: (b.errors - a.errors) / minutes });
  }
  const width = 480;
  const height = 120;
  const max = Math.max(1, ...rates.map((r) => r.requests));
  const bar = width / Math.max(rates.length, 1);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "chart");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("role", "img");
  const last = rates.at(-1);
  svg.setAttribute(
    "aria-label",
    last
      ? `Latest: ${Math.round(last.requests)} requests and ${Math.round(last.errors)} errors per minute`
      : "Collecting samples",
  );
  rates.forEach((r, i) => {
    for (const [value, fill] of [
      [r.requests, "none"],
      [r.errors, "#a51d2d"],
    ]) {
      const rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      const barHeight = (value / max) * (height - 10);
      rect.setAttribute("x", i * bar + 1);
      rect.setAttribute("y", height - barHeight);
      rect.setAttribute("width", Math.max(bar - 2, 1));
      rect.setAttribute("height", barHeight);
      rect.setAttribute("fill", fill);
      rect.setAttribute("stroke", "#1a5fb4");
      svg.append(rect);
    }
  });
  return h(
    "figure",
    {},
    svg,
    h(
      "figcaption",
      {},
      last
        ? `Now: ${Math.round(last.requests)} requests/min, ${Math.round(last.errors)} errors/min (4xx and 5xx)`
        : "Collecting samples…",
    ),
  );
}

// ---- Members ----

async function renderMembers() {
  const members = await operation("list_all_members", {});
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
          h("td", { class: "hash" }, m.owner),
          h("td", {}, m.created_at),
          h("td", { class: "hash" }, m.tx_hash ?? ""),
        ),
      ),
    ),
  );
}

// ---- Wallets ----

async function download(walletId, index, address) {
  if (!confirm(`Download the keystore file of ${address}? It holds the encrypted key.`)) return;
  try {
    const [record] = await api(`/wallet/${encodeURIComponent(walletId)}`, { query: `?index=${index}` });
    const link = h("a", {
      href: URL.createObjectURL(new Blob([record.data], { type: "application/json" })),
      download: `UTC--${address}.json`,
    });
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (error) {
    say(error.message);
  }
}

function signingState(account) {
  if (!account) return h("td", {}, "—");
  if (account.unattended) return h("td", { class: "state-ok", "data-signing": "unattended" }, "unattended");
  if (account.unlocked_until !== null) {
    const until = new Date(account.unlocked_until).toLocaleTimeString();
    return h("td", { class: "state-wait", "data-signing": "unlocked" }, `unlocked until ${until}`);
  }
  return h("td", { "data-signing": "locked" }, "locked");
}

async function lockAddress(walletId, index) {
  try {
    await api(`/wallet/${encodeURIComponent(walletId)}/lock`, { method: "POST", body: { index } });
    say(`Locked address ${index} of ${walletId}.`, true);
    await renderWallets();
  } catch (error) {
    say(error.message);
  }
}

async function renderWallets() {
  await loadNetwork();
  const [records, accounts] = await Promise.all([api("/wallet"), api("/accounts")]);
  const byAddress = new Map(accounts.map((a) => [a.address.toLowerCase(), a]));
  const chains = network.chains.map((c) => c.chain_id);
  const balances = await Promise.all(
    records.map((r) =>
      Promise.all(chains.map((id) => rpc("eth_getBalance", [r.address, "latest"], id).catch(() => null))),
    ),
  );
  const refresh = async (result) => {
    await renderWallets();
    return result;
  };
  main.replaceChildren(
    h("h2", {}, "Wallets"),
    table(
      "Custody addresses (keystore v3); key material is never shown",
      ["Wallet", "Index", "Address", ...chains.map((id) => `Balance on ${id}`), "Signing", "Keystore"],
      records.map((r, i) => {
        const account = byAddress.get(r.address.toLowerCase());
        return h(
          "tr",
          { "data-wallet": r.id, "data-address": r.address },
          h("td", { class: "hash" }, r.id),
          h("td", {}, r.index),
          h("td", { class: "hash" }, r.address),
          balances[i].map((b, j) =>
            h("td", { "data-chain": chains[j] }, b === null ? "unavailable" : formatEther(b)),
          ),
          signingState(account),
          h(
            "td",
            {},
            h("button", { type: "button", onclick: () => download(r.id, r.index, r.address) }, "Download"),
            account && account.unlocked_until !== null
              ? h("button", { type: "button", onclick: () => lockAddress(r.id, r.index) }, "Lock")
              : null,
          ),
        );
      }),
    ),
    h(
      "p",
      {},
      "Unlocked or unattended addresses sign for JSON-RPC clients (eth_sendTransaction, personal_sign, ...). Unlocks live in memory only and end at their time or at a restart.",
    ),
    actionForm(
      "unlock",
      "Unlock for signing",
      [
        ...field("unlock", "wallet_id", "Wallet id", { required: true }),
        ...field("unlock", "index", "Address index (empty: all)", { type: "number", min: 0 }),
        ...field("unlock", "seconds", "Seconds (empty: default)", { type: "number", min: 0 }),
        ...field("unlock", "password", "Wallet password", {
          type: "password",
          required: true,
          autocomplete: "off",
        }),
      ],
      (v) => `Unlock ${v.index === "" ? "every address" : `address ${v.index}`} of wallet ${v.wallet_id}?`,
      (v) =>
        api(`/wallet/${encodeURIComponent(v.wallet_id)}/unlock`, {
          method: "POST",
          body: {
            password: v.password,
            ...(v.index === "" ? {} : { index: Number(v.index) }),
            ...(v.seconds === "" ? {} : { seconds: Number(v.seconds) }),
          },
        }).then(refresh),
    ),
    actionForm(
      "unattended",
      "Make unattended",
      [
        ...field("unattended", "wallet_id", "Wallet id", { required: true }),
        ...field("unattended", "password", "Wallet password", {
          type: "password",
          required: true,
          autocomplete: "off",
        }),
      ],
      (v) =>
        `Let chaingate sign for wallet ${v.wallet_id} at any time, with no unlock? Its keys are sealed under the server key.`,
      (v) =>
        api(`/wallet/${encodeURIComponent(v.wallet_id)}/unattended`, {
          method: "POST",
          body: { password: v.password },
        }).then(refresh),
    ),
    actionForm(
      "attended",
      "Stop unattended signing",
      [...field("attended", "wallet_id", "Wallet id", { required: true })],
      (v) => `Stop unattended signing for wallet ${v.wallet_id}?`,
      (v) => api(`/wallet/${encodeURIComponent(v.wallet_id)}/unattended`, { method: "DELETE" }).then(refresh),
    ),
  );
}

// ---- Transfers and transports ----

const STUCK_MS = 60_000;
function interesting(filter, state, updatedAt) {
  if (filter === "failed") return ["failed", "dropped"].includes(state);
  if (filter === "stuck")
    return ["queued", "sent", "delivering"].includes(state) && Date.now() - Date.parse(updatedAt) > STUCK_MS;
  return true;
}

async function renderActivity(filter = "all") {
  const [{ transfers }, { transports }] = await Promise.all([
    operation("list_all_transfers", { limit: 200 }),
    operation("list_all_transports", { limit: 200 }),
  ]);
  const select = h(
    "select",
    { id: "activity-filter", onchange: (event) => renderActivity(event.target.value) },
    ["all", "stuck", "failed"].map((value) =>
      h(
        "option",
        { value, selected: value === filter },
        value === "stuck" ? "stuck (pending over 1 min)" : value,
      ),
    ),
  );
  main.replaceChildren(
    h("h2", {}, "Transfers and transports"),
    h("p", {}, h("label", { for: "activity-filter" }, "Show "), select),
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
        "Age",
        "Error",
        "Refund",
      ],
      transports
        .filter((t) => interesting(filter, t.state, t.updated_at))
        .map((t) =>
          h(
            "tr",
            { "data-transport": t.id },
            h("td", { class: "hash" }, t.id.slice(0, 18)),
            h("td", {}, t.kind),
            h("td", {}, t.source_chain_id),
            h("td", {}, t.destination_chain_id),
            h("td", {}, t.amount ?? t.token_id ?? (t.payload_hash ? "message" : "")),
            stateCell(t.state),
            h("td", { class: "hash" }, t.source_tx_hash ?? ""),
            h("td", { class: "hash" }, t.destination_tx_hash ?? ""),
            h("td", {}, age(t.created_at)),
            h("td", {}, t.error ?? ""),
            h("td", { class: "hash" }, t.refund_state ? `${t.refund_state} ${t.refund_tx_hash ?? ""}` : ""),
          ),
        ),
      { id: "transports" },
    ),
    table(
      "Transactions signed by chaingate",
      ["Kind", "Chain", "From", "To", "Nonce", "State", "Transaction", "Age", "Error"],
      transfers
        .filter((t) => interesting(filter, t.state, t.updated_at))
        .map((t) =>
          h(
            "tr",
            {},
            h("td", {}, t.kind),
            h("td", {}, t.chain_id),
            h("td", { class: "hash" }, t.from),
            h("td", { class: "hash" }, t.to ?? "(deploy)"),
            h("td", {}, t.nonce),
            stateCell(t.state),
            h("td", { class: "hash" }, t.tx_hash),
            h("td", {}, age(t.created_at)),
            h("td", {}, t.error ?? ""),
          ),
        ),
      { id: "transfers" },
    ),
  );
}

// ---- Actions ----

function field(form, name, label, attributes = {}) {
  const id = `${form}-${name}`;
  return [h("label", { for: id }, label), h("input", { id, name, ...attributes })];
}

function chainSelect(form, name, label) {
  const id = `${form}-${name}`;
  return [
    h("label", { for: id }, label),
    h(
      "select",
      { id, name },
      network.chains.map((c) =>
        h("option", { value: c.chain_id }, `${c.chain_id}${c.home ? " (home)" : ""}`),
      ),
    ),
  ];
}

function actionForm(id, legend, fields, confirmText, submit) {
  const form = h("form", { class: "action", id }, ...fields, h("button", { type: "submit" }, legend));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form));
    if (!confirm(confirmText(values))) return;
    say("Working…", true);
    try {
      const result = await submit(values);
      say(`${legend}: done.\n${JSON.stringify(result, null, 2)}`, true);
      form.querySelectorAll("input[type=password]").forEach((input) => {
        input.value = "";
      });
    } catch (error) {
      say(`${legend} failed. ${error.message}`);
    }
  });
  return h("fieldset", {}, h("legend", {}, legend), form);
}

const signer = (values) => ({
  wallet_id: values.wallet_id,
  password: values.password,
  ...(values.index ? { index: Number(values.index) } : {}),
});
const signerFields = (form) => [
  ...field(form, "wallet_id", "Wallet id", { required: true }),
  ...field(form, "index", "Address index", { type: "number", min: 0, value: 0 }),
  ...field(form, "password", "Wallet password", { type: "password", required: true, autocomplete: "off" }),
];

async function renderActions() {
  await loadNetwork();
  main.replaceChildren(
    h("h2", {}, "Actions"),
    h("p", {}, "Each action asks for confirmation first. Errors are shown as the API gives them."),
    actionForm(
      "create-wallet",
      "Create wallet",
      [
        ...field("create-wallet", "password", "Password", {
          type: "password",
          required: true,
          autocomplete: "new-password",
        }),
        ...field("create-wallet", "address_quantity", "Addresses", {
          type: "number",
          min: 1,
          value: 1,
          required: true,
        }),
      ],
      (v) => `Create a keystore v3 wallet with ${v.address_quantity} address(es)?`,
      (v) =>
        api("/wallet", {
          method: "POST",
          body: { type: "KEYSTORE_V3", password: v.password, address_quantity: Number(v.address_quantity) },
        }).then((records) => records.map((r) => ({ id: r.id, index: r.index, address: r.address }))),
    ),
    actionForm(
      "register-member",
      "Register member",
      [
        ...field("register-member", "name", "Name", { required: true }),
        ...chainSelect("register-member", "chain_id", "Chain"),
        h("label", { for: "register-member-role" }, "Role"),
        h(
          "select",
          { id: "register-member-role", name: "role" },
          ["PARTICIPANT", "ISSUER", "AUDITOR"].map((r) => h("option", { value: r }, r)),
        ),
      ],
      (v) => `Register member "${v.name}" on chain ${v.chain_id} as ${v.role}?`,
      (v) => operation("register_new_member", { name: v.name, chain_id: Number(v.chain_id), role: v.role }),
    ),
    actionForm(
      "send-transaction",
      "Send transaction",
      [
        ...signerFields("send-transaction"),
        ...chainSelect("send-transaction", "chain_id", "Chain"),
        ...field("send-transaction", "to", "To address", { required: true }),
        ...field("send-transaction", "value", "Value (wei)", { required: true, value: "0" }),
      ],
      (v) => `Send ${v.value} wei to ${v.to} on chain ${v.chain_id}?`,
      (v) =>
        api("/transaction", {
          method: "POST",
          body: { ...signer(v), chain_id: Number(v.chain_id), transaction: { to: v.to, value: v.value } },
        }),
    ),
    actionForm(
      "create-token",
      "Create ERC20 token",
      [
        ...signerFields("create-token"),
        ...chainSelect("create-token", "chain_id", "Chain"),
        ...field("create-token", "name", "Name", { required: true }),
        ...field("create-token", "symbol", "Symbol", { required: true }),
        ...field("create-token", "initial_supply", "Initial supply (base units)", { required: true }),
      ],
      (v) => `Create ERC20 "${v.name}" (${v.symbol}) with a supply of ${v.initial_supply}?`,
      (v) =>
        operation("create_new_ERC20_token", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          name: v.name,
          symbol: v.symbol,
          initial_supply: v.initial_supply,
        }),
    ),
    actionForm(
      "transport-tokens",
      "Transport tokens",
      [
        ...signerFields("transport-tokens"),
        ...chainSelect("transport-tokens", "chain_id", "From chain"),
        ...field("transport-tokens", "token", "Token address", { required: true }),
        ...field("transport-tokens", "to", "Recipient", { required: true }),
        ...field("transport-tokens", "amount", "Amount (base units)", { required: true }),
        ...chainSelect("transport-tokens", "destination_chain_id", "To chain"),
      ],
      (v) => `Transport ${v.amount} of ${v.token} to ${v.to} on chain ${v.destination_chain_id}?`,
      (v) =>
        operation("trasport_token", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          token: v.token,
          to: v.to,
          amount: v.amount,
          destination_chain_id: Number(v.destination_chain_id),
        }),
    ),
  );
}

// ---- Routing ----

const PAGES = {
  "#/network": renderNetwork,
  "#/members": renderMembers,
  "#/wallets": renderWallets,
  "#/activity": () => renderActivity(document.getElementById("activity-filter")?.value ?? "all"),
  "#/actions": renderActions,
};

async function route() {
  clearTimeout(refreshTimer);
  const hash = PAGES[location.hash] ? location.hash : "#/network";
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === hash) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.getElementById("session").textContent = key() ? "Using an API key" : "";
  try {
    await PAGES[hash]();
    // Live pages refresh themselves; the action forms are left alone while they are filled in.
    if (hash === "#/network" || hash === "#/activity") refreshTimer = setTimeout(route, 2000);
  } catch (error) {
    if (error instanceof ApiError) say(error.message);
    else throw error;
  }
}

window.addEventListener("hashchange", () => {
  say("");
  route().then(() => main.focus());
});
startFeed();
sampleMetrics();
setInterval(sampleMetrics, 5000);
route();
