// The Network page: chains, upstreams, the live block feed and the requests chart.
import { h, key, loadNetwork, main, nav, network, table } from "./lib.js";

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

// ---- Network ----

export async function renderNetwork() {
  const visit = nav.visits;
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
  if (visit !== nav.visits) return; // another page was asked for meanwhile: it owns main now
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
export function startFeed() {
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

export async function sampleMetrics() {
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
