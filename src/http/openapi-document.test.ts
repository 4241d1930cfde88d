import { afterAll, beforeAll, expect, it } from "vitest";
import { native } from "../test-support/chain-helpers.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

interface OpenApi {
  info: { license?: { name: string } };
  servers?: { url: string }[];
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
  security?: Record<string, string[]>[];
  tags: { name: string }[];
  paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
}

let rt: TestRuntime;
let doc: OpenApi;
beforeAll(async () => {
  rt = await startTestRuntime();
  doc = (await (await fetch(`${rt.url}/openapi.json`)).json()) as OpenApi;
});
afterAll(async () => {
  await rt?.close();
});

it("the OpenAPI document declares its bearer scheme (optional), a server, a licence and every tag it uses", () => {
  expect(doc.components?.securitySchemes?.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  expect(doc.security).toEqual([{}, { apiKey: [] }]);
  expect(doc.servers?.[0]?.url).toBe("/");
  // The same licence as package.json declares (and LICENSE holds).
  expect(doc.info.license?.name).toBe("MIT");
  const declared = new Set(doc.tags.map((t) => t.name));
  const used = new Set(
    Object.values(doc.paths).flatMap((methods) => Object.values(methods).flatMap((op) => op.tags ?? [])),
  );
  expect([...used].filter((tag) => !declared.has(tag))).toEqual([]);
});

it("bodies are required only where a request cannot go without one", () => {
  const required = (path: string) =>
    (doc.paths[path]?.post as { requestBody?: { required?: boolean } } | undefined)?.requestBody?.required;
  for (const optional of [
    "/eth_blockNumber",
    "/eth_accounts",
    "/list_all_transfers",
    "/list_all_transports",
    "/list_all_members",
  ]) {
    expect(required(optional), optional).toBe(false);
  }
  for (const needed of ["/eth_getBalance", "/wallet", "/transaction", "/create_new_ERC20_token"]) {
    expect(required(needed), needed).toBe(true);
  }
});

it("every operation has a unique operationId", () => {
  const ids = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => op.operationId ?? `(none: ${method} ${path})`),
  );
  expect(ids.filter((id) => id.startsWith("(none"))).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
});

it("/transport_token is an alias of the spec's /trasport_token: both documented, both validate alike", async () => {
  expect(doc.paths["/trasport_token"]?.post).toBeDefined();
  expect(doc.paths["/transport_token"]?.post).toBeDefined();
  const [spec, alias] = await Promise.all(
    ["/trasport_token", "/transport_token"].map(async (path) => (await rt.post(path, { params: [{}] })).json),
  );
  expect((alias as { error: { code: number; message: string } }).error).toEqual(
    (spec as { error: { code: number; message: string } }).error,
  );
});

it("eth_protocolVersion answers a string, as the spec's envelope carries it", async () => {
  expect(typeof (await native(rt, "eth_protocolVersion")).result).toBe("string");
});

it("every Members, Token Management and Transactions operation types its result: a record with its fields, not any JSON value", () => {
  type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[] };
  const typed: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    const post = methods.post as
      | { tags?: string[]; responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }
      | undefined;
    if (!post?.tags?.some((t) => ["Members", "Token Management", "Transactions"].includes(t))) continue;
    const envelope = post.responses?.["200"]?.content?.["application/json"]?.schema;
    if (envelope?.properties?.jsonrpc === undefined) continue; // REST routes answer their own records
    const result = envelope.properties.result;
    const record = result?.type === "array" ? result.items : result;
    expect(record?.type, `${path} result`).toBe("object");
    expect(Object.keys(record?.properties ?? {}).length, `${path} result fields`).toBeGreaterThanOrEqual(2);
    typed.push(path);
  }
  // The spec's Members and Token Management operations, the alias and list_all_transfers.
  expect(typed.sort()).toEqual(
    [
      "/create_new_ERC20_token",
      "/create_new_ERC721_token",
      "/deploy_new_contract",
      "/list_all_members",
      "/list_all_transfers",
      "/list_all_transports",
      "/register_new_member",
      "/transfer_tokens",
      "/transport_arbitrary_message",
      "/transport_token",
      "/transport_token_with_data",
      "/trasport_token",
    ].sort(),
  );
});

it("/favicon.ico is an icon, not a 404", async () => {
  const icon = await fetch(`${rt.url}/favicon.ico`);
  expect(icon.status).toBe(200);
  expect(icon.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
  expect(await icon.text()).toContain("<svg");
});

it("REST bodies sent without a Content-Type are read as JSON; another media type is told to send application/json", async () => {
  const body = new TextEncoder().encode(
    JSON.stringify({ type: "KEYSTORE_V3", password: "no-content-type", address_quantity: 1 }),
  );
  const bare = await fetch(`${rt.url}/wallet`, { method: "POST", body });
  expect(bare.status).toBe(200);
  const labelled = await fetch(`${rt.url}/wallet`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body,
  });
  expect(labelled.status).toBe(415);
  expect(await labelled.json()).toMatchObject({
    code: "UNSUPPORTED_MEDIA_TYPE",
    detail: expect.stringContaining("Content-Type: application/json"),
  });
  const transaction = await fetch(`${rt.url}/transaction`, {
    method: "POST",
    body: new TextEncoder().encode(
      JSON.stringify({
        wallet_id: "nope",
        password: "x",
        transaction: { to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value: "1" },
      }),
    ),
  });
  // Read as JSON and validated: the wallet is unknown, not the media type.
  expect(transaction.status).toBe(404);
});

it("a bad operation field is named with the form it takes and an example", async () => {
  const { json } = await rt.post("/create_new_ERC20_token", {
    params: [{ wallet_id: "w", password: "pw", name: "Gate", symbol: "GATE", initial_supply: 12.5 }],
  });
  const message = (json as { error: { message: string } }).error.message;
  expect(message).toContain("initial_supply is not valid: minted to the creator (base units");
  expect(message).toContain('e.g. "1000000"');
  expect(message).toContain("got 12.5");
  const missing = await rt.post("/create_new_ERC20_token", {
    params: [{ wallet_id: "w", password: "pw", name: "Gate", symbol: "GATE" }],
  });
  expect((missing.json as { error: { message: string } }).error.message).toContain(
    "initial_supply is missing",
  );
});

it("a value outside a closed list is answered with every value allowed, on operations and REST routes alike", async () => {
  const role = await rt.post("/list_all_members", { role: "OWNER" });
  const roleMessage = (role.json as { error: { message: string } }).error.message;
  expect(roleMessage).toContain('role must be one of "PARTICIPANT", "ISSUER", "AUDITOR"; got "OWNER"');
  const state = await rt.post("/list_all_transports", { state: "done" });
  const stateMessage = (state.json as { error: { message: string; data: { field: string } } }).error;
  expect(stateMessage.message).toMatch(/state must be one of "[a-z_]+"(, "[a-z_]+")+; got "done"/);
  expect(stateMessage.data.field).toBe("state");
  const missing = await rt.post("/register_new_member", { chain_id: 1001, role: "ISSUER" });
  expect((missing.json as { error: { message: string } }).error.message).toContain("name is missing");
  // A REST route (validated by Fastify's schema): the same list, and what was sent.
  const audit = await fetch(`${rt.url}/audit?decision=maybe`);
  expect(audit.status).toBe(400);
  expect((await audit.json()) as { detail: string }).toMatchObject({
    detail: expect.stringContaining('decision must be one of "allowed", "denied", "change"; got "maybe"'),
  });
});

it("/docs is branded as chaingate: its title, its icon and its logo", async () => {
  const page = await (await fetch(`${rt.url}/docs/`)).text();
  expect(page).toContain("<title>chaingate API</title>");
  expect(page).toMatch(/rel="icon"[^>]*favicon\.svg|favicon\.svg[^>]*rel="icon"/);
  // swagger-ui swaps its own logo for ours in the initializer script, as a data URL.
  const script = await (await fetch(`${rt.url}/docs/static/swagger-initializer.js`)).text();
  const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(script)?.[1];
  expect(Buffer.from(logo ?? "", "base64").toString()).toContain("chaingate API");
});
