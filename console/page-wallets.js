// The Wallets page: custody addresses, their signing state and balances of every token on every chain.
import { actionForm, addressPicker, field, passwordField, pickedAddress, walletPicker } from "./forms.js";
import {
  amountCell,
  api,
  etherCell,
  h,
  hashCell,
  loadCustody,
  loadNetwork,
  loadTokens,
  main,
  nav,
  network,
  rpc,
  say,
  table,
  timeOf,
  tokenBalance,
  tokens,
} from "./lib.js";

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
    return h(
      "td",
      { class: "state-wait", "data-signing": "unlocked" },
      "unlocked until ",
      timeOf(account.unlocked_until),
    );
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

export async function renderWallets() {
  const visit = nav.visits;
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
            t.standard === "ERC20"
              ? amountCell(
                  held,
                  { decimals: t.decimals, symbol: t.symbol },
                  { "data-balance": held.toString() },
                )
              : h(
                  "td",
                  { class: "number", "data-balance": held.toString() },
                  `${held} ${t.symbol} token${held === 1n ? "" : "s"}`,
                ),
          ),
        );
      });
    });
  });
  if (visit !== nav.visits) return; // another page was asked for meanwhile: it owns main now
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
            b === null
              ? h("td", { "data-chain": chains[j], class: "number" }, "unavailable")
              : etherCell(b, { "data-chain": chains[j] }),
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
