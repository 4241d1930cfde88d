// The operator console: a plain page over chaingate's public HTTP API (the same calls any client makes); this module routes between the pages, one ES module each.
import { forgetAnswers } from "./forms.js";
import { ApiError, key, main, nav, say } from "./lib.js";
import { renderActions } from "./page-actions.js";
import { renderActivity } from "./page-activity.js";
import { renderAudit } from "./page-audit.js";
import { renderMembers } from "./page-members.js";
import { renderNetwork, sampleMetrics, startFeed } from "./page-network.js";
import { renderWallets } from "./page-wallets.js";

let refreshTimer;

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

async function route() {
  clearTimeout(refreshTimer);
  const visit = ++nav.visits;
  // A page's address may carry what to pick on it (#/activity?tx=0x…, from an action's answer).
  const path = location.hash.split("?")[0];
  const hash = PAGES[path] ? path : "#/network";
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === hash) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.getElementById("session").textContent = key() ? "Using an API key" : "";
  try {
    await PAGES[hash]();
    // Live pages refresh themselves; the action forms are left alone while they are filled in.
    if (visit === nav.visits && (hash === "#/network" || hash === "#/activity"))
      refreshTimer = setTimeout(() => {
        if (visit === nav.visits) route();
      }, 2000);
  } catch (error) {
    if (error instanceof ApiError) say(error.message);
    else throw error;
  }
}

nav.route = route;
nav.restartFeed = startFeed;
window.addEventListener("hashchange", () => {
  say("");
  forgetAnswers();
  route().then(() => main.focus());
});
startFeed();
sampleMetrics();
setInterval(sampleMetrics, 5000);
route();
