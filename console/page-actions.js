// The Actions page: the forms that create wallets, members and tokens, and send, transfer and transport.
import {
  actionForm,
  addressField,
  amountFields,
  amountOrId,
  chainSelect,
  datalists,
  field,
  homeChain,
  jsonField,
  otherChain,
  signer,
  signerFields,
  what,
} from "./forms.js";
import { api, h, loadCustody, loadMembers, loadNetwork, loadTokens, main, nav, operation } from "./lib.js";

export async function renderActions() {
  const visit = nav.visits;
  await Promise.all([loadNetwork(), loadCustody(), loadMembers(), loadTokens()]);
  const home = homeChain();
  const away = otherChain(home);
  if (visit !== nav.visits) return; // another page was asked for meanwhile: it owns main now
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
