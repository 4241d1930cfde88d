// The Network page: chains, upstreams, the live block feed and the requests chart.
import { h, key, loadNetwork, main, nav, network, short, table } from "./lib.js";

const blocks = [];
/**
 * The server's requests and errors by ten seconds over the last ten minutes (GET /metrics/recent),
 * read on load and every five seconds: the chart is full from the first look, whoever opened it.
 */
let recent = [];
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

/** A new block: its number and hash, shortened as every hash is (the whole on hover). */
function blockLine(block) {
  return h(
    "li",
    { title: block.hash },
    `#${Number.parseInt(block.number, 16)} ${short(block.hash)} ${block.transactions ?? ""}`,
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
    const response = await fetch("/metrics/recent", { headers });
    metricsDenied = response.status === 403;
    if (!response.ok) return;
    const { bucket_seconds: seconds, buckets } = await response.json();
    // Per minute; the current bucket is counted over the part of it that has passed.
    recent = buckets.map((b, i) => {
      const at = Date.parse(b.at);
      const passed = i === buckets.length - 1 ? Math.max(1, (Date.now() - at) / 1000) : seconds;
      return {
        at: at + seconds * 1000,
        requests: (b.requests * 60) / passed,
        errors: (b.errors * 60) / passed,
      };
    });
    document.getElementById("requests-chart")?.closest("figure")?.replaceWith(chart());
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
 * Requests and errors per minute by ten seconds (the server's history), as bars on a time axis that
 * ends now: requests in blue, the 4xx/5xx answers among them in red on top of it.
 */
function chart() {
  const rates = recent;
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
      : "Reading the server's history",
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
  const bar = Math.max(2, (inner.width * 10_000) / span - 2);
  for (const r of rates) {
    // Quiet buckets draw nothing (a bar of height 0 is not a bar).
    if (now - r.at > span || r.requests === 0) continue;
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
        ? ` · now ${Math.round(last.requests)} requests/min, ${Math.round(last.errors)} errors/min (by 10 s, this instance)`
        : " · reading the server's history…",
    ),
  );
}
