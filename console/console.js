// The operator console: a plain page over chaingate's public HTTP API (the same calls any client makes).

const KEY_STORAGE = "chaingate.apiKey";
const main = document.getElementById("main");
const notice = document.getElementById("notice");
let network = { chains: [] };
const blocks = [];
const SAMPLES_STORAGE = "chaingate.metricSamples";
/**
 * /metrics samples of the last five minutes, kept in this tab's session storage so a reload draws
 * the chart it had rather than starting empty (the counters are the server's, so deltas across a
 * reload hold; a restarted server's counters start again and count as zero, never negative).
 */
const metricSamples = restoredSamples();

function restoredSamples() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(SAMPLES_STORAGE) ?? "[]");
    return Array.isArray(kept) ? kept.filter((s) => Date.now() - s.at < 5 * 60_000) : [];
  } catch {
    return [];
  }
}
/** /metrics answers admin keys only: a user key's console says so instead of drawing an empty chart. */
let metricsDenied = false;
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

/** The 401 codes that mean "send an API key" (docs/api.md's error catalogue). */
const KEY_CODES = ["API_KEY_REQUIRED", "API_KEY_INVALID"];

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

/** Wei as ether, exact: every significant decimal kept (1 wei reads 0.000000000000000001 ETH, not 0.0000). */
function formatEther(hexWei) {
  return `${formatUnits(BigInt(hexWei ?? 0), 18)} ETH`;
}

function age(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/** A long hex value shortened to its ends; the whole is in the title (hover) and the copy button. */
function short(value) {
  const text = String(value);
  return text.length > 20 ? `${text.slice(0, 10)}…${text.slice(-6)}` : text;
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

function hashCell(value, attributes = {}) {
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
function formatUnits(value, decimals) {
  if (value === null || value === undefined) return "";
  const amount = BigInt(value);
  // Whole units grouped by thousands (1,000,000), the fraction exact with its trailing zeros dropped.
  if (!decimals) return amount.toLocaleString("en-US");
  const scale = 10n ** BigInt(decimals);
  const fraction = (amount % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${(amount / scale).toLocaleString("en-US")}${fraction ? `.${fraction}` : ""}`;
}

/** An error in a table: one line, cut with an ellipsis; the whole text on hover and for screen readers. */
function errorCell(text, title) {
  if (!text) return h("td", {}, "");
  return h("td", { class: "error", title: title ? `${text}\n${title}` : text }, text);
}

function stateCell(state) {
  const ok = ["confirmed", "mined", "delivered", "ACTIVE"].includes(state);
  // Held transports need the operator: their source chain's nodes disagree, or the source left the chain.
  const bad = ["failed", "dropped", "SUSPENDED", "awaiting_quorum", "reorged"].includes(state);
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
  const visit = visits;
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
  if (visit !== visits) return; // another page was asked for meanwhile: it owns main now
  main.replaceChildren(
    h("h2", {}, "Network"),
    ...chains,
    h("h3", {}, "New blocks on the home chain (live, over the WebSocket)"),
    h("ul", { class: "feed", id: "feed", "aria-live": "polite" }, blocks.map(blockLine)),
    h("h3", {}, "Requests and errors per minute (from /metrics)"),
    metricsDenied
      ? h("p", { class: "hint" }, "/metrics is for admin keys: sign in with one to see this chart.")
      : chart(),
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
    const response = await fetch("/metrics", { headers });
    metricsDenied = response.status === 403;
    if (!response.ok) return;
    const text = await response.text();
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
    sessionStorage.setItem(SAMPLES_STORAGE, JSON.stringify(metricSamples));
  } catch {
    // The chart shows what it has; the next sample tries again.
  }
}

const SVG = "http://www.w3.org/2000/svg";
function svgElement(tag, attributes, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

/** A round axis top at or above the largest value: 1, 2 or 5 times a power of ten. */
function axisTop(max) {
  const power = 10 ** Math.floor(Math.log10(Math.max(max, 1)));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max) ?? 10 * power;
}

/**
 * Requests and errors per minute between consecutive /metrics samples (every 5 s), as bars on a time
 * axis that ends now: requests in blue, the 4xx/5xx answers among them in red on top of it.
 */
function chart() {
  const rates = [];
  for (let i = 1; i < metricSamples.length; i++) {
    const [a, b] = [metricSamples[i - 1], metricSamples[i]];
    const minutes = (b.at - a.at) / 60_000;
    rates.push({
      at: b.at,
      requests: Math.max(0, (b.requests - a.requests) / minutes),
      errors: Math.max(0, (b.errors - a.errors) / minutes),
    });
  }
  const [width, height] = [600, 200];
  const plot = { left: 64, right: 12, top: 12, bottom: 36 };
  const inner = { width: width - plot.left - plot.right, height: height - plot.top - plot.bottom };
  const top = axisTop(Math.max(...rates.map((r) => r.requests), 1));
  const span = 5 * 60_000; // the axis always shows the last five minutes
  const now = Date.now();
  const x = (at) => plot.left + inner.width * (1 - (now - at) / span);
  const y = (value) => plot.top + inner.height * (1 - value / top);
  const svg = svgElement("svg", {
    class: "chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    id: "requests-chart",
  });
  const last = rates.at(-1);
  svg.setAttribute(
    "aria-label",
    last
      ? `Requests per minute over the last five minutes; latest ${Math.round(last.requests)} requests and ${Math.round(last.errors)} errors per minute`
      : "Collecting samples",
  );
  // Axes, gridlines and their labels (units on the y axis, minutes ago on the x axis).
  for (const value of [0, top / 2, top]) {
    svg.append(
      svgElement("line", {
        x1: plot.left,
        x2: width - plot.right,
        y1: y(value),
        y2: y(value),
        class: "grid",
      }),
      svgElement(
        "text",
        { x: plot.left - 6, y: y(value) + 4, "text-anchor": "end", class: "tick" },
        String(value),
      ),
    );
  }
  svg.append(
    svgElement(
      "text",
      {
        x: 14,
        y: plot.top + inner.height / 2,
        transform: `rotate(-90 14 ${plot.top + inner.height / 2})`,
        "text-anchor": "middle",
        class: "axis-label",
      },
      "requests / min",
    ),
  );
  for (let minutes = 5; minutes >= 0; minutes--) {
    const at = now - minutes * 60_000;
    svg.append(
      svgElement("line", {
        x1: x(at),
        x2: x(at),
        y1: plot.top + inner.height,
        y2: plot.top + inner.height + 4,
        class: "axis",
      }),
      svgElement(
        "text",
        { x: x(at), y: height - 16, "text-anchor": "middle", class: "tick" },
        minutes === 0 ? "now" : `−${minutes} min`,
      ),
    );
  }
  svg.append(
    svgElement("line", {
      x1: plot.left,
      x2: plot.left,
      y1: plot.top,
      y2: plot.top + inner.height,
      class: "axis",
    }),
    svgElement("line", {
      x1: plot.left,
      x2: width - plot.right,
      y1: plot.top + inner.height,
      y2: plot.top + inner.height,
      class: "axis",
    }),
  );
  const bar = Math.max(2, (inner.width * 5_000) / span - 2);
  for (const r of rates) {
    if (now - r.at > span) continue;
    svg.append(
      svgElement("rect", {
        x: x(r.at) - bar,
        y: y(r.requests),
        width: bar,
        height: y(0) - y(r.requests),
        class: "requests",
      }),
    );
    // An error bar only where there were errors: a red mark always means a failed request.
    if (r.errors > 0) {
      svg.append(
        svgElement("rect", {
          x: x(r.at) - bar,
          y: y(r.errors),
          width: bar,
          height: y(0) - y(r.errors),
          class: "errors",
        }),
      );
    }
  }
  return h(
    "figure",
    {},
    svg,
    h(
      "figcaption",
      {},
      h("span", { class: "key key-requests" }, "requests"),
      " ",
      h("span", { class: "key key-errors" }, "errors (4xx and 5xx)"),
      last
        ? ` · now ${Math.round(last.requests)} requests/min, ${Math.round(last.errors)} errors/min (sampled every 5 s)`
        : " · collecting samples…",
    ),
  );
}

// ---- Shared lists: custody addresses, members, tokens ----

let custody = [];
let members = [];
let tokens = [];

async function loadCustody() {
  custody = await api("/wallet");
  return custody;
}

async function loadMembers() {
  members = await operation("list_all_members", {});
  return members;
}

/** Tokens chaingate created (its own transfers of kind create_*; each names its contract in `details.token`). */
async function loadTokens() {
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

/**
 * balanceOf(owner) of a token on a chain, read with eth_call (0x70a08231 is the selector of
 * balanceOf(address)). A token has the same address on every chain it is transported to; where it
 * has no code yet the call answers "0x", a zero balance.
 */
async function tokenBalance(token, owner, chainId = token.chain_id) {
  const data = `0x70a08231${owner.slice(2).toLowerCase().padStart(64, "0")}`;
  const answer = await rpc("eth_call", [{ to: token.address, data }, "latest"], chainId);
  return BigInt(answer === "0x" ? 0 : answer);
}

// ---- Members ----

async function renderMembers() {
  const visit = visits;
  await loadMembers();
  if (visit !== visits) return; // another page was asked for meanwhile: it owns main now
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
          h("td", {}, m.created_at),
          hashCell(m.tx_hash),
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
  const visit = visits;
  await loadNetwork();
  const [records, accounts] = await Promise.all([loadCustody(), api("/accounts"), loadTokens()]);
  const byAddress = new Map(accounts.map((a) => [a.address.toLowerCase(), a]));
  const chains = network.chains.map((c) => c.chain_id);
  const [balances, holdings] = await Promise.all([
    Promise.all(
      records.map((r) =>
        Promise.all(chains.map((id) => rpc("eth_getBalance", [r.address, "latest"], id).catch(() => null))),
      ),
    ),
    // Every token on every chain: tokens received by a transport are on the destination chain.
    Promise.all(
      records.map((r) =>
        Promise.all(
          tokens.map((t) =>
            Promise.all(chains.map((id) => tokenBalance(t, r.address, id).catch(() => null))),
          ),
        ),
      ),
    ),
  ]);
  const refresh = async (result) => {
    await renderWallets();
    return result;
  };
  const tokenRows = [];
  records.forEach((r, i) => {
    tokens.forEach((t, j) => {
      chains.forEach((chainId, k) => {
        const held = holdings[i][j][k];
        if (held === null || held === 0n) return;
        tokenRows.push(
          h(
            "tr",
            { "data-holder": r.address, "data-token": t.address, "data-chain": chainId },
            hashCell(r.address),
            h("td", {}, `${t.symbol} (${t.standard})`),
            h(
              "td",
              {},
              chainId === t.chain_id ? `${chainId}` : `${chainId} (transported from ${t.chain_id})`,
            ),
            hashCell(t.address),
            h(
              "td",
              { class: "number", "data-balance": held.toString() },
              t.standard === "ERC20"
                ? `${formatUnits(held, t.decimals)} ${t.symbol}`
                : `${held} ${t.symbol} token${held === 1n ? "" : "s"}`,
            ),
          ),
        );
      });
    });
  });
  if (visit !== visits) return; // another page was asked for meanwhile: it owns main now
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
          hashCell(r.id),
          h("td", { class: "number" }, r.index),
          hashCell(r.address),
          balances[i].map((b, j) =>
            h(
              "td",
              { "data-chain": chains[j], class: "number" },
              b === null ? "unavailable" : formatEther(b),
            ),
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
    table(
      "Token balances of the custody addresses on every chain (tokens chaingate created, in whole units; zero balances left out)",
      ["Address", "Token", "Chain", "Contract", "Balance"],
      tokenRows,
      { id: "token-balances" },
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
        ...addressPicker("unlock", { everyAddress: true }),
        ...field("unlock", "seconds", "Seconds (empty: default)", { type: "number", min: 0 }),
        ...passwordField("unlock"),
      ],
      (v) => {
        const { wallet_id, index } = pickedAddress(v);
        return `Unlock ${index === undefined ? "every address" : `address ${index}`} of wallet ${wallet_id}?`;
      },
      (v) => {
        const { wallet_id, index } = pickedAddress(v);
        return api(`/wallet/${encodeURIComponent(wallet_id)}/unlock`, {
          method: "POST",
          body: {
            password: v.password,
            ...(index === undefined ? {} : { index }),
            ...(v.seconds === "" ? {} : { seconds: Number(v.seconds) }),
          },
        }).then(refresh);
      },
    ),
    actionForm(
      "unattended",
      "Make unattended",
      [...walletPicker("unattended"), ...passwordField("unattended")],
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
      [...walletPicker("attended")],
      (v) => `Stop unattended signing for wallet ${v.wallet_id}?`,
      (v) => api(`/wallet/${encodeURIComponent(v.wallet_id)}/unattended`, { method: "DELETE" }).then(refresh),
    ),
  );
}

// ---- Transfers and transports ----

const STUCK_MS = 60_000;
const PAGE_SIZE = 25;
function interesting(filter, state, updatedAt) {
  if (filter === "failed") return ["failed", "dropped", "awaiting_quorum", "reorged"].includes(state);
  if (filter === "stuck")
    return ["queued", "sent", "delivering"].includes(state) && Date.now() - Date.parse(updatedAt) > STUCK_MS;
  return true;
}

/** Where each list is: the cursors of the pages before (a stack), and the cursor of this one. */
const pages = {
  transports: { before: [], cursor: undefined },
  transfers: { before: [], cursor: undefined },
  audit: { before: [], cursor: undefined },
};

function pager(list, nextCursor) {
  const at = pages[list];
  const go = (cursor, before) => {
    pages[list] = { cursor, before };
    route();
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
function movedValue(t) {
  if (t.details?.amount !== undefined) return `${t.details.amount} units`;
  if (t.details?.token_id !== undefined) return `token id ${t.details.token_id}`;
  if (t.details?.initial_supply !== undefined) return `supply ${t.details.initial_supply}`;
  return t.value && t.value !== "0" ? formatEther(t.value) : "";
}

async function renderActivity(filter = "all") {
  const visit = visits;
  const cursorOf = (list) => (pages[list].cursor === undefined ? {} : { cursor: pages[list].cursor });
  const [{ transfers, next_cursor: nextTransfers }, { transports, next_cursor: nextTransports }] =
    await Promise.all([
      operation("list_all_transfers", { limit: PAGE_SIZE, ...cursorOf("transfers") }),
      operation("list_all_transports", { limit: PAGE_SIZE, ...cursorOf("transports") }),
    ]);
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
  if (visit !== visits) return; // another page was asked for meanwhile: it owns main now
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
            hashCell(t.id),
            h("td", {}, t.kind),
            h("td", {}, t.source_chain_id),
            h("td", {}, t.destination_chain_id),
            h("td", { class: "number" }, t.amount ?? t.token_id ?? (t.payload_hash ? "message" : "")),
            t.state === "queued" && t.release_at
              ? h(
                  "td",
                  {
                    class: "state-wait",
                    "data-state": t.state,
                    title: t.refund_at ? `refunded at ${t.refund_at}` : "",
                  },
                  `queued until ${new Date(t.release_at).toLocaleString()}`,
                )
              : stateCell(t.state),
            hashCell(t.source_tx_hash),
            hashCell(t.destination_tx_hash),
            h("td", {}, age(t.created_at)),
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
      ["Kind", "Chain", "From", "To", "Value", "Nonce", "State", "Transaction", "Age", "Error"],
      transfers
        .filter((t) => interesting(filter, t.state, t.updated_at))
        .map((t) =>
          h(
            "tr",
            { "data-transfer": t.tx_hash },
            h("td", {}, t.kind),
            h("td", {}, t.chain_id),
            hashCell(t.from),
            t.to ? hashCell(t.to) : h("td", {}, "(deploy)"),
            h("td", { class: "number", "data-value": "" }, movedValue(t)),
            h("td", { class: "number" }, t.nonce),
            stateCell(t.state),
            hashCell(t.tx_hash),
            h("td", {}, age(t.created_at)),
            errorCell(t.error),
          ),
        ),
      { id: "transfers" },
    ),
    pager("transfers", nextTransfers),
  );
}

// ---- Actions ----

function field(form, name, label, attributes = {}) {
  const id = `${form}-${name}`;
  return [h("label", { for: id }, label), h("input", { id, name, ...attributes })];
}

function passwordField(form) {
  return field(form, "password", "Wallet password", {
    type: "password",
    required: true,
    autocomplete: "off",
  });
}

function chainSelect(form, name, label, selected) {
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
function otherChain(source) {
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

function homeChain() {
  return network.chains.find((c) => c.home)?.chain_id;
}

const walletLabel = (r) => `${short(r.address)} · wallet ${r.id.slice(0, 8)}… #${r.index}`;

/** A select of every custody address (value wallet:index), optionally with "every address" per wallet. */
function addressPicker(form, { everyAddress = false } = {}) {
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

function walletPicker(form) {
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

function pickedAddress(values) {
  const [wallet_id, index] = String(values.signer).split(":");
  return { wallet_id, index: index === "*" ? undefined : Number(index) };
}

/** A text input that also offers the known addresses (tokens, custody addresses, members' owners). */
function addressField(form, name, label, listId, attributes = {}) {
  return field(form, name, label, {
    list: listId,
    required: true,
    pattern: "0x[0-9a-fA-F]{40}",
    placeholder: "0x… (pick or paste)",
    autocomplete: "off",
    ...attributes,
  });
}

function datalists() {
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
      // A done action starts its form over (the password first of all), so nothing of it is sent twice by mistake.
      form.reset();
    } catch (error) {
      say(`${legend} failed. ${error.message}`);
    }
  });
  followSource(form);
  return h("fieldset", {}, h("legend", {}, legend), form);
}

const signer = (values) => {
  const { wallet_id, index } = pickedAddress(values);
  return { wallet_id, index, password: values.password };
};
const signerFields = (form) => [...addressPicker(form), ...passwordField(form)];

/** Either an amount (ERC20) or a token id (ERC721), whichever was filled in. */
function amountOrId(values) {
  if (values.token_id) return { token_id: values.token_id };
  return { amount: values.amount };
}
const amountFields = (form) => [
  ...field(form, "amount", "Amount (ERC20, base units)", { inputmode: "numeric", pattern: "[0-9]+" }),
  ...field(form, "token_id", "or token id (ERC721)", { inputmode: "numeric", pattern: "[0-9]+" }),
];
const what = (v) => (v.token_id ? `token id ${v.token_id}` : `${v.amount} base units`);

/** The JSON a field holds, or undefined when it is empty; a parse error names the field. */
function jsonField(values, name, label) {
  if (!values[name]) return undefined;
  try {
    return JSON.parse(values[name]);
  } catch {
    throw new ApiError(`${label} is not valid JSON`);
  }
}

async function renderActions() {
  const visit = visits;
  await Promise.all([loadNetwork(), loadCustody(), loadMembers(), loadTokens()]);
  const home = homeChain();
  const away = otherChain(home);
  if (visit !== visits) return; // another page was asked for meanwhile: it owns main now
  main.replaceChildren(
    h("h2", {}, "Actions"),
    h(
      "p",
      {},
      "Each action asks for confirmation first. Errors are shown as the API gives them. Addresses and tokens can be picked from the lists or pasted.",
    ),
    ...datalists(),
    h("h3", { class: "group" }, "Wallets and transactions"),
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
      "send-transaction",
      "Send transaction",
      [
        ...signerFields("send-transaction"),
        ...chainSelect("send-transaction", "chain_id", "Chain", home),
        ...addressField("send-transaction", "to", "To address", "known-addresses"),
        ...field("send-transaction", "value", "Value (wei)", {
          required: true,
          value: "0",
          inputmode: "numeric",
        }),
      ],
      (v) => `Send ${v.value} wei to ${v.to} on chain ${v.chain_id}?`,
      (v) =>
        api("/transaction", {
          method: "POST",
          body: { ...signer(v), chain_id: Number(v.chain_id), transaction: { to: v.to, value: v.value } },
        }),
    ),
    h("h3", { class: "group" }, "Members"),
    actionForm(
      "register-member",
      "Register member",
      [
        ...field("register-member", "name", "Name", { required: true }),
        ...chainSelect("register-member", "chain_id", "Chain", away),
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
    h("h3", { class: "group" }, "Token Management"),
    actionForm(
      "create-token",
      "Create ERC20 token",
      [
        ...signerFields("create-token"),
        ...chainSelect("create-token", "chain_id", "Chain", home),
        ...field("create-token", "name", "Name", { required: true }),
        ...field("create-token", "symbol", "Symbol", { required: true }),
        ...field("create-token", "decimals", "Decimals", { type: "number", min: 0, max: 36, value: 18 }),
        ...field("create-token", "initial_supply", "Initial supply (base units)", {
          required: true,
          inputmode: "numeric",
          pattern: "[0-9]+",
        }),
      ],
      (v) => `Create ERC20 "${v.name}" (${v.symbol}) with a supply of ${v.initial_supply} base units?`,
      (v) =>
        operation("create_new_ERC20_token", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          name: v.name,
          symbol: v.symbol,
          decimals: Number(v.decimals || 18),
          initial_supply: v.initial_supply,
        }),
    ),
    actionForm(
      "create-nft",
      "Create ERC721 token",
      [
        ...signerFields("create-nft"),
        ...chainSelect("create-nft", "chain_id", "Chain", home),
        ...field("create-nft", "name", "Name", { required: true }),
        ...field("create-nft", "symbol", "Symbol", { required: true }),
        ...field("create-nft", "base_uri", "Base URI", { placeholder: "ipfs://… (optional)" }),
        ...field("create-nft", "mint", "Mint token ids", { placeholder: "1, 2, 3 (optional)" }),
      ],
      (v) => `Create ERC721 "${v.name}" (${v.symbol})${v.mint ? ` and mint ${v.mint}` : ""}?`,
      (v) =>
        operation("create_new_ERC721_token", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          name: v.name,
          symbol: v.symbol,
          ...(v.base_uri ? { base_uri: v.base_uri } : {}),
          ...(v.mint
            ? {
                mint: v.mint
                  .split(",")
                  .map((id) => id.trim())
                  .filter(Boolean),
              }
            : {}),
        }),
    ),
    actionForm(
      "transfer-tokens",
      "Transfer tokens",
      [
        ...signerFields("transfer-tokens"),
        ...chainSelect("transfer-tokens", "chain_id", "Chain", home),
        ...addressField("transfer-tokens", "token", "Token", "known-tokens"),
        ...addressField("transfer-tokens", "to", "Recipient", "known-addresses"),
        ...amountFields("transfer-tokens"),
      ],
      (v) => `Transfer ${what(v)} of ${v.token} to ${v.to} on chain ${v.chain_id}?`,
      (v) =>
        operation("transfer_tokens", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          token: v.token,
          to: v.to,
          ...amountOrId(v),
        }),
    ),
    actionForm(
      "transport-tokens",
      "Transport tokens",
      [
        ...signerFields("transport-tokens"),
        ...chainSelect("transport-tokens", "chain_id", "From chain", home),
        ...addressField("transport-tokens", "token", "Token", "known-tokens"),
        ...addressField("transport-tokens", "to", "Recipient", "known-addresses"),
        ...amountFields("transport-tokens"),
        ...chainSelect("transport-tokens", "destination_chain_id", "To chain", away),
      ],
      (v) => `Transport ${what(v)} of ${v.token} to ${v.to} on chain ${v.destination_chain_id}?`,
      (v) =>
        operation("trasport_token", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          token: v.token,
          to: v.to,
          ...amountOrId(v),
          destination_chain_id: Number(v.destination_chain_id),
        }),
    ),
    actionForm(
      "transport-with-data",
      "Transport tokens with data",
      [
        ...signerFields("transport-with-data"),
        ...chainSelect("transport-with-data", "chain_id", "From chain", home),
        ...addressField("transport-with-data", "token", "Token", "known-tokens"),
        ...addressField("transport-with-data", "to", "Receiving contract", "known-addresses"),
        ...amountFields("transport-with-data"),
        ...field("transport-with-data", "data", "Data for onTokenTransport (hex)", {
          required: true,
          pattern: "0x([0-9a-fA-F]{2})*",
          placeholder: "0x…",
        }),
        ...chainSelect("transport-with-data", "destination_chain_id", "To chain", away),
      ],
      (v) => `Transport ${what(v)} of ${v.token} with data to ${v.to} on chain ${v.destination_chain_id}?`,
      (v) =>
        operation("transport_token_with_data", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          token: v.token,
          to: v.to,
          ...amountOrId(v),
          data: v.data,
          destination_chain_id: Number(v.destination_chain_id),
        }),
    ),
    actionForm(
      "send-message",
      "Send message",
      [
        ...signerFields("send-message"),
        ...chainSelect("send-message", "chain_id", "From chain", home),
        ...addressField("send-message", "destination", "Receiving contract", "known-addresses"),
        ...field("send-message", "payload", "Payload (hex)", {
          required: true,
          pattern: "0x([0-9a-fA-F]{2})*",
          placeholder: "0x…",
        }),
        ...chainSelect("send-message", "destination_chain_id", "To chain", away),
      ],
      (v) => `Send ${v.payload} to ${v.destination} on chain ${v.destination_chain_id}?`,
      (v) =>
        operation("transport_arbitrary_message", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          destination: v.destination,
          payload: v.payload,
          destination_chain_id: Number(v.destination_chain_id),
        }),
    ),
    actionForm(
      "deploy-contract",
      "Deploy contract",
      [
        ...signerFields("deploy-contract"),
        ...chainSelect("deploy-contract", "chain_id", "Chain", home),
        h("label", { for: "deploy-contract-bytecode" }, "Creation bytecode (hex)"),
        h("textarea", {
          id: "deploy-contract-bytecode",
          name: "bytecode",
          required: true,
          rows: 3,
          placeholder: "0x6080…",
        }),
        h("label", { for: "deploy-contract-abi" }, "ABI (JSON, for constructor arguments)"),
        h("textarea", { id: "deploy-contract-abi", name: "abi", rows: 2, placeholder: "[...] (optional)" }),
        ...field("deploy-contract", "constructor_args", "Constructor arguments (JSON array)", {
          placeholder: '["Gate", 18] (optional)',
        }),
      ],
      (v) => `Deploy ${Math.floor((v.bytecode.length - 2) / 2)} bytes of code on chain ${v.chain_id}?`,
      async (v) => {
        const abi = jsonField(v, "abi", "ABI");
        const args = jsonField(v, "constructor_args", "Constructor arguments");
        return operation("deploy_new_contract", {
          ...signer(v),
          chain_id: Number(v.chain_id),
          bytecode: v.bytecode.trim(),
          ...(abi === undefined ? {} : { abi }),
          ...(args === undefined ? {} : { constructor_args: args }),
        });
      },
    ),
  );
}

// ---- Audit ----

/** The audit log (GET /audit): every signing decision and policy or key change; an admin sees all. */
async function renderAudit(decision = "all") {
  const visit = visits;
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (decision !== "all") query.set("decision", decision);
  if (pages.audit.cursor !== undefined) query.set("cursor", pages.audit.cursor);
  const { entries, next_cursor: next } = await api("/audit", { query: `?${query}` });
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
  if (visit !== visits) return; // another page was asked for meanwhile: it owns main now
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
        "Value (wei)",
        "Token amount",
        "Transaction",
      ],
      entries.map((e) =>
        h(
          "tr",
          { "data-audit": e.id, "data-decision": e.decision },
          h("td", {}, new Date(e.created_at).toLocaleString()),
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
          h("td", {}, e.value ?? ""),
          h("td", {}, e.token_amount ?? ""),
          hashCell(e.tx_hash),
        ),
      ),
      { id: "audit" },
    ),
    pager("audit", next),
  );
}

// ---- Routing ----

const PAGES = {
  "#/network": renderNetwork,
  "#/members": renderMembers,
  "#/wallets": renderWallets,
  "#/activity": () => renderActivity(document.getElementById("activity-filter")?.value ?? "all"),
  "#/actions": renderActions,
  "#/audit": () => renderAudit(document.getElementById("audit-decision")?.value ?? "all"),
};

/**
 * Navigations so far. A page's render is asynchronous: one that finishes after another page was
 * asked for must not replace it, nor schedule a refresh of whatever page is showing then (a
 * refresh of the Network page re-rendered the Actions page under a form being filled in).
 */
let visits = 0;

async function route() {
  clearTimeout(refreshTimer);
  const visit = ++visits;
  const hash = PAGES[location.hash] ? location.hash : "#/network";
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === hash) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.getElementById("session").textContent = key() ? "Using an API key" : "";
  try {
    await PAGES[hash]();
    // Live pages refresh themselves; the action forms are left alone while they are filled in.
    if (visit === visits && (hash === "#/network" || hash === "#/activity"))
      refreshTimer = setTimeout(() => {
        if (visit === visits) route();
      }, 2000);
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
