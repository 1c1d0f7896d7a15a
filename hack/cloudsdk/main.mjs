// Two published WhatsApp Cloud API client libraries, used unchanged but
// for their base URL, against the bridge's Cloud API door: every message
// type to a simulated contact (reply buttons built by each library's own
// builder; the kinds the bridge does not send refused with Cloud's error),
// a read mark, media up and down, templates, and the bridge's Cloud
// webhooks (a tap on a button among them) parsed, signature included, by
// each library's own webhook code. TestCloudSDKs (test/process) runs it
// and checks on the simulator that every message arrived.
import { readFileSync } from "node:fs";
import { WhatsAppAPI } from "whatsapp-api-js";
import { Text, Image, Document, Location, Contacts, Reaction, Interactive, ActionButtons, Button, Body } from "whatsapp-api-js/messages";
import { Header, Footer, ActionCTA } from "whatsapp-api-js/messages";
import { Template, Language, BodyComponent, BodyParameter } from "whatsapp-api-js/messages";
import { Name, Phone } from "whatsapp-api-js/messages";
import { WhatsAppClient } from "@kapso/whatsapp-cloud-api";
import { verifySignature, normalizeWebhook } from "@kapso/whatsapp-cloud-api/server";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const base = env("BRIDGE_URL"), token = env("TOKEN"), phone = env("PHONE_ID"), to = env("TO");
const waba = env("WABA"), appSecret = env("APP_SECRET"), readID = env("READ_ID");
const png = new Uint8Array(readFileSync(env("PNG_FILE")));
const sent = {}, refused = {};
const must = (cond, what) => { if (!cond) throw new Error(what); };

// whatsapp-api-js names graph.facebook.com in its URLs; its fetch ponyfill
// (the library's own extension point) sends them to the bridge instead.
const graph = "https://graph.facebook.com";
const api = new WhatsAppAPI({
  token, appSecret, v: "v21.0",
  ponyfill: { fetch: (url, init) => fetch(String(url).replace(graph, base), init) },
});

async function viaWhatsAppAPIJS() {
  const id = async (name, p) => {
    const r = await p;
    must(r?.messages?.[0]?.id, `whatsapp-api-js ${name}: ${JSON.stringify(r)}`);
    sent[`wajs ${name}`] = r.messages[0].id;
    return r.messages[0].id;
  };
  const first = await id("text", api.sendMessage(phone, to, new Text("hello from whatsapp-api-js")));
  const form = new FormData();
  form.append("file", new Blob([png], { type: "image/png" }), "photo.png");
  const up = await api.uploadMedia(phone, form);
  must(up?.id, `upload: ${JSON.stringify(up)}`);
  const media = await api.retrieveMedia(up.id, phone);
  must(media.url && media.mime_type === "image/png" && media.file_size === png.length, `media: ${JSON.stringify(media)}`);
  const file = await api.fetchMedia(media.url);
  must(new Uint8Array(await file.arrayBuffer()).length === png.length, "the fetched media differs");
  await id("image", api.sendMessage(phone, to, new Image(up.id, true, "a photo")));
  await id("document", api.sendMessage(phone, to, new Document(up.id, true, "doc caption", "photo.png")));
  await id("location", api.sendMessage(phone, to, new Location(13.4, 52.52, "Office", "Street 1")));
  await id("contacts", api.sendMessage(phone, to, new Contacts([new Name("Bob B", "Bob"), new Phone("+4915100000003", "CELL", "4915100000003")])));
  await id("interactive", api.sendMessage(phone, to, new Interactive(
    new ActionButtons(new Button("y", "Yes"), new Button("n", "No")), new Body("Coming?"), new Header("Party"), new Footer("RSVP"))));
  const cta = await api.sendMessage(phone, to, new Interactive(new ActionCTA("Site", "https://example.com"), new Body("See")));
  refused["wajs cta_url"] = cta?.error?.code ?? 0;
  await id("reply", api.sendMessage(phone, to, new Text("as I said"), first));
  await id("reaction", api.sendMessage(phone, to, new Reaction(first, "👍")));
  // kapso_order, a NAMED template Kapso created (viaKapso runs first).
  await id("template", api.sendMessage(phone, to, new Template("kapso_order", new Language("en_US"),
    new BodyComponent(new BodyParameter("7", "order"), new BodyParameter("Wajs", "first_name")))));
  const read = await api.markAsRead(phone, readID);
  must(read?.success === true, `read: ${JSON.stringify(read)}`);
  const del = await api.deleteMedia(up.id, phone);
  must(del?.success === true, `delete: ${JSON.stringify(del)}`);
}

async function viaKapso() {
  const client = new WhatsAppClient({ accessToken: token, baseUrl: base, graphVersion: "v23.0" });
  const id = async (name, p) => {
    const r = await p;
    must(r?.messages?.[0]?.id, `kapso ${name}: ${JSON.stringify(r)}`);
    sent[`kapso ${name}`] = r.messages[0].id;
    return r.messages[0].id;
  };
  const number = await client.request("GET", phone, { responseType: "json" });
  must(number.id === phone, `phone number: ${JSON.stringify(number)}`);
  await client.templates.create({ businessAccountId: waba, name: "kapso_hello", language: "en_US", category: "UTILITY",
    components: [{ type: "BODY", text: "Hello {{1}}" }] });
  await client.templates.create({ businessAccountId: waba, name: "kapso_order", language: "en_US", category: "UTILITY",
    parameterFormat: "NAMED", components: [{ type: "BODY", text: "Order {{order}} for {{first_name}}",
      example: { body_text_named_params: [{ param_name: "order", example: "1" }, { param_name: "first_name", example: "Ana" }] } }] });
  const list = await client.templates.list({ businessAccountId: waba });
  must(list.data.some((t) => t.name === "kapso_hello"), `templates: ${JSON.stringify(list)}`);
  const named = list.data.find((t) => t.name === "kapso_order");
  must(named && (named.parameterFormat ?? named.parameter_format) === "NAMED", `named template: ${JSON.stringify(named)}`);
  const first = await id("text", client.messages.sendText({ phoneNumberId: phone, to, body: "hello from kapso" }));
  const up = await client.media.upload({ phoneNumberId: phone, type: "image/png", file: new Blob([png], { type: "image/png" }), fileName: "k.png" });
  const meta = await client.media.get({ mediaId: up.id, phoneNumberId: phone });
  must(meta.mimeType === "image/png", `kapso media: ${JSON.stringify(meta)}`);
  await id("image", client.messages.sendImage({ phoneNumberId: phone, to, image: { id: up.id, caption: "k photo" } }));
  await id("sticker", client.messages.sendSticker({ phoneNumberId: phone, to, sticker: { id: up.id } }));
  await id("location", client.messages.sendLocation({ phoneNumberId: phone, to, location: { latitude: 52.52, longitude: 13.4, name: "Office" } }));
  await id("template", client.messages.sendTemplate({ phoneNumberId: phone, to,
    template: { name: "kapso_hello", language: { code: "en_US" }, components: [{ type: "body", parameters: [{ type: "text", text: "Ana" }] }] } }));
  await id("named template", client.messages.sendTemplate({ phoneNumberId: phone, to,
    template: { name: "kapso_order", language: { code: "en_US" }, components: [{ type: "body",
      parameters: [{ type: "text", parameterName: "first_name", text: "Kap" }, { type: "text", parameterName: "order", text: "9" }] }] } }));
  await id("buttons", client.messages.sendInteractiveButtons({ phoneNumberId: phone, to, bodyText: "Pick one",
    header: { type: "text", text: "Fruit" }, footerText: "fresh", buttons: [{ id: "a", title: "Apple" }, { id: "b", title: "Pear" }] }));
  try {
    await client.messages.sendInteractiveList({ phoneNumberId: phone, to, bodyText: "Pick one", buttonText: "Menu",
      sections: [{ title: "Fruit", rows: [{ id: "a", title: "Apple" }, { id: "b", title: "Pear" }] }] });
    refused["kapso list"] = 0;
  } catch (e) {
    refused["kapso list"] = e.code ?? -1;
  }
  await id("reply", client.messages.sendText({ phoneNumberId: phone, to, body: "kapso reply", contextMessageId: first }));
  await id("reaction", client.messages.sendReaction({ phoneNumberId: phone, to, reaction: { messageId: first, emoji: "❤️" } }));
  await client.messages.markRead({ phoneNumberId: phone, messageId: readID });
}

// Each library's own webhook code takes the bridge's Cloud webhooks.
async function parseHooks() {
  const hooks = JSON.parse(readFileSync(env("HOOKS_FILE"), "utf8"));
  const seen = { wajs: [], kapso: [] };
  api.on.message = ({ message, from }) => {
    seen.wajs.push({ kind: "message", id: message.id, type: message.type, from, reply: message.interactive?.button_reply?.id });
  };
  api.on.status = ({ id, status, error }) => { seen.wajs.push({ kind: "status", id, status, code: error?.code ?? 0 }); };
  for (const h of hooks) {
    await api.post(JSON.parse(h.body), h.body, h.signature);
    must(verifySignature({ appSecret, rawBody: h.body, signatureHeader: h.signature }), "kapso: the signature does not verify");
    must(!verifySignature({ appSecret: appSecret + "x", rawBody: h.body, signatureHeader: h.signature }), "kapso: a wrong secret verifies");
    const n = normalizeWebhook(JSON.parse(h.body));
    for (const m of n.messages) seen.kapso.push({ kind: "message", id: m.id, type: m.type, reply: m.interactive?.buttonReply?.id });
    for (const s of n.statuses) seen.kapso.push({ kind: "status", id: s.id, status: s.status });
  }
  let refused = false;
  try { await api.post(JSON.parse(hooks[0].body), hooks[0].body, "sha256=00"); } catch { refused = true; }
  must(refused, "whatsapp-api-js took a wrong signature");
  return seen;
}

await viaKapso();
await viaWhatsAppAPIJS();
const hooks = await parseHooks();
console.log(JSON.stringify({ sent, refused, hooks }));
