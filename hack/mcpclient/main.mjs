// The official MCP TypeScript SDK's client, unchanged, against the bridge's
// /mcp (TestMCPClients in test/process): it does what an assistant does
// and prints one JSON line of what it saw, then "ok"; any surprise throws.
//
// env: BRIDGE_URL, API_KEY, CHAT (the contact), MESSAGE_ID (what the
// contact wrote).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { BRIDGE_URL, API_KEY, CHAT, MESSAGE_ID } = process.env;

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const transport = new StreamableHTTPClientTransport(new URL(BRIDGE_URL + "/mcp"), {
  requestInit: { headers: { Authorization: `Bearer ${API_KEY}` } },
});
const client = new Client({ name: "msgbridge-test", version: "1.0.0" });
await client.connect(transport);

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  check(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
  return res.structuredContent;
}

const tools = (await client.listTools()).tools.map((t) => t.name).sort();
check(tools.join(",") === "list_chats,mark_read,read_messages,search_messages,send_message", `tools: ${tools}`);

const chats = await call("list_chats", { limit: 10 });
const chat = chats.chats.find((c) => c.chat === CHAT);
check(chat && chat.unread >= 1 && chat.last.untrusted === true, `list_chats: ${JSON.stringify(chats)}`);

const page = await call("read_messages", { chat: CHAT });
const planted = page.messages.find((m) => m.id === MESSAGE_ID);
check(planted && planted.origin === "third_party" && planted.untrusted === true && planted.direction === "in",
  `read_messages: ${JSON.stringify(page)}`);

const found = await call("search_messages", { query: "instructions" });
check(found.messages.some((m) => m.id === MESSAGE_ID && m.untrusted === true), `search_messages: ${JSON.stringify(found)}`);

const text = { chat: CHAT, text: "hello from the assistant", reply_to: MESSAGE_ID, idempotency_key: "mcp-test-1" };
const first = await call("send_message", text);
const again = await call("send_message", text); // a retry by key
check(first.status === "queued" && JSON.stringify(again) === JSON.stringify(first), `retried by key: ${JSON.stringify([first, again])}`);

// A retry of the very same JSON-RPC request (same session, same id), as a
// client that lost the answer resends it, through the SDK's transport.
const retried = [];
const onmessage = transport.onmessage;
let answer = null;
transport.onmessage = (msg, extra) => {
  if (msg.id === 424242) {
    retried.push(msg.result);
    answer();
    return;
  }
  onmessage(msg, extra);
};
const request = { jsonrpc: "2.0", id: 424242, method: "tools/call",
  params: { name: "send_message", arguments: { chat: CHAT, text: "sent once by request id" } } };
for (let i = 0; i < 2; i++) {
  const answered = new Promise((resolve) => { answer = resolve; });
  await transport.send(request);
  await answered;
}
transport.onmessage = onmessage;
check(!retried[0].isError && JSON.stringify(retried[0].structuredContent) === JSON.stringify(retried[1].structuredContent),
  `retried by request id: ${JSON.stringify(retried)}`);

const reacted = await call("send_message", { chat: CHAT, reaction: { message_id: MESSAGE_ID, emoji: "👍" } });
const read = await call("mark_read", { chat: CHAT, message_id: MESSAGE_ID });
check(read.read === true, `mark_read: ${JSON.stringify(read)}`);

console.log(JSON.stringify({
  text: first.messages[0].whatsapp_id,
  byRequestID: retried[0].structuredContent.messages[0].whatsapp_id,
  reaction: reacted.messages[0].whatsapp_id,
}));
await client.close();
console.log("ok");
