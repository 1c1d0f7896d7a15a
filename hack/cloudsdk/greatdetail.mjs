// @great-detail/whatsapp, used unchanged, against the bridge's Cloud API
// door. Its Client is given only the bridge's address as baseUrl and keeps
// its default Graph version: ky resolves each relative endpoint against
// "{baseUrl}/v23.0" with no trailing slash, so every call goes to an
// unversioned Graph path (POST /{phone}/messages), as it does against Meta.
// TestCloudSDKGreatDetail (test/process) runs it twice:
//
//	node greatdetail.mjs send   every message type, a read mark, media up,
//	                            a NAMED template; prints the ids as JSON
//	node greatdetail.mjs hooks  the bridge's real Cloud webhooks (recorded by
//	                            the test's receiver, headers and all) through
//	                            the SDK's own webhook handler; prints what
//	                            it parsed as JSON
import { readFileSync } from "node:fs";
import Client from "@great-detail/whatsapp";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const must = (cond, what) => { if (!cond) throw new Error(what); };
const token = env("TOKEN"), appSecret = env("APP_SECRET");
const sdk = new Client({ baseUrl: env("BRIDGE_URL"), request: { headers: { Authorization: `Bearer ${token}` } } });

async function send() {
  const phone = env("PHONE_ID"), to = env("TO"), waba = env("WABA"), files = env("FILES_URL");
  const sent = {};
  const message = async (name, body) => {
    const r = await sdk.message.createMessage({ phoneNumberID: phone, to, ...body }).json();
    must(r?.messages?.[0]?.id && r.contacts?.[0]?.wa_id === to, `${name}: ${JSON.stringify(r)}`);
    sent[name] = r.messages[0].id;
    return r.messages[0].id;
  };
  const upload = async (file, mimeType) => {
    const data = await (await fetch(`${files}/files/${file}`)).blob();
    const r = await sdk.media.upload({ phoneNumberID: phone, file: data, filename: file, mimeType }).json();
    must(r?.id, `upload ${file}: ${JSON.stringify(r)}`);
    return r.id;
  };
  const first = await message("text", { type: "text", text: { body: "hello from great-detail", preview_url: false } });
  await message("reply", { type: "text", context: { message_id: first }, text: { body: "as I said" } });
  await message("buttons", { type: "interactive", interactive: { type: "button", header: { type: "text", text: "Order 17" },
    body: { text: "Deliver today?" }, footer: { text: "Shop" },
    action: { buttons: [{ type: "reply", reply: { id: "gd:yes", title: "Yes" } }, { type: "reply", reply: { id: "gd:no", title: "Tomorrow" } }] } } });
  const image = await upload("photo.png", "image/png");
  const meta = await sdk.media.getURL({ mediaID: image, phoneNumberID: phone }).json();
  must(meta.url && meta.mime_type === "image/png" && meta.id === image, `media url: ${JSON.stringify(meta)}`);
  // download builds its own request (no base URL, no token): the token is
  // passed as Graph's media URLs need it.
  const file = new Uint8Array(await sdk.media.download({ mediaURL: meta.url, request: { headers: { Authorization: `Bearer ${token}` } } }).arrayBuffer());
  const png = new Uint8Array(await (await fetch(`${files}/files/photo.png`)).arrayBuffer());
  must(file.length === png.length && file.every((b, i) => b === png[i]), `downloaded ${file.length} bytes, not the ${png.length} uploaded`);
  await message("image by id", { type: "image", image: { id: image, caption: "a photo" } });
  await message("document by id", { type: "document", document: { id: await upload("report.pdf", "application/pdf"), filename: "q3.pdf", caption: "numbers" } });
  await message("audio by id", { type: "audio", audio: { id: await upload("note.ogg", "audio/ogg") } });
  await message("video by id", { type: "video", video: { id: await upload("clip.mp4", "video/mp4"), caption: "a clip" } });
  await message("image by link", { type: "image", image: { link: `${files}/files/photo.png`, caption: "linked" } });
  await message("document by link", { type: "document", document: { link: `${files}/files/report.pdf`, filename: "linked.pdf" } });
  await message("audio by link", { type: "audio", audio: { link: `${files}/files/note.ogg` } });
  await message("video by link", { type: "video", video: { link: `${files}/files/clip.mp4` } });
  await message("location", { type: "location", location: { latitude: 52.52, longitude: 13.4, name: "Office", address: "Street 1" } });
  await message("contacts", { type: "contacts", contacts: [{ name: { formatted_name: "Bob B", first_name: "Bob" },
    phones: [{ phone: "+4915100000003", wa_id: "4915100000003", type: "CELL" }] }] });
  await message("reaction", { type: "reaction", reaction: { message_id: first, emoji: "👍" } });
  const tpl = await sdk.template.create(waba, { name: "gd_order", language: "en_US", category: "UTILITY", parameter_format: "NAMED",
    components: [{ type: "BODY", text: "Hi {{first_name}}, order {{order}} is ready, {{first_name}}",
      example: { body_text_named_params: [{ param_name: "first_name", example: "Ana" }, { param_name: "order", example: "42" }] } }] }).json();
  must(tpl?.id, `template: ${JSON.stringify(tpl)}`);
  await message("template", { type: "template", template: { name: "gd_order", language: { code: "en_US" },
    components: [{ type: "body", parameters: [{ type: "text", parameter_name: "order", text: "42" }, { type: "text", parameter_name: "first_name", text: "Zed" }] }] } });
  const read = await sdk.message.createStatus({ phoneNumberID: phone, message_id: env("READ_ID"), status: "read" }).json();
  must(read?.success === true, `read: ${JSON.stringify(read)}`);
  // Accepted as Cloud accepts it; its failure comes back as a status.
  const failed = await sdk.message.createMessage({ phoneNumberID: phone, to: env("NOBODY"), type: "text", text: { body: "anyone?" } }).json();
  must(failed?.messages?.[0]?.id, `to nobody: ${JSON.stringify(failed)}`);
  const del = await sdk.media.delete({ mediaID: image, phoneNumberID: phone }).json();
  must(del?.success === true, `delete: ${JSON.stringify(del)}`);
  return { sent, failed: failed.messages[0].id };
}

// hooks passes each recorded delivery to the SDK's webhook handler as a
// server hands it a request, checks its signature under the app secret
// (and that a wrong secret is refused), and reads the event notification
// it returns.
async function hooks() {
  const recorded = JSON.parse(readFileSync(env("HOOKS_FILE"), "utf8"));
  const reg = await sdk.webhook.register({ method: "GET", query: recorded.handshake, headers: {} });
  const seen = { verifyToken: reg.verifyToken, challenge: reg.accept() === recorded.handshake["hub.challenge"], events: [] };
  for (const d of recorded.deliveries) {
    const n = await sdk.webhook.eventNotification({ method: "POST", query: {}, body: d.body, headers: d.headers });
    await n.verifySignature(appSecret);
    must(!(await n.checkSignature(appSecret + "x")), "a wrong app secret verifies");
    must(n.eventNotification.object === "whatsapp_business_account", `object: ${d.body}`);
    for (const entry of n.eventNotification.entry) {
      for (const { field, value } of entry.changes) {
        if (field !== "messages") continue;
        for (const m of value.messages ?? []) {
          seen.events.push({ kind: "message", id: m.id, type: m.type, from: m.from, text: m.text?.body ?? "",
            reply: m.interactive?.button_reply?.id ?? "", context: m.context?.id ?? "", name: value.contacts?.[0]?.profile?.name ?? "" });
        }
        for (const s of value.statuses ?? []) {
          seen.events.push({ kind: "status", id: s.id, status: s.status, recipient: s.recipient_id, code: s.errors?.[0]?.code ?? 0 });
        }
      }
    }
  }
  return seen;
}

const out = process.argv[2] === "hooks" ? await hooks() : await send();
console.log(JSON.stringify(out));
