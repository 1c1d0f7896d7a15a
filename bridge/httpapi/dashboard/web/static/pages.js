// The data pages: overview, messages, conversations, receivers, admin. They
// read the bridge's API through /dashboard/api with the session's cookie
// (never a key in a URL), and read again when the event stream says that
// messages changed.
"use strict";

const apiBase = "/dashboard/api";

// For the browser test and the latency figure: per "id:status", when a
// message's row first showed that status; the arrival times of traffic
// events (ms since the epoch).
window.rowTimes = {};
window.trafficTimes = [];

// api calls the dashboard's API; a change carries the CSRF token.
function api(path, method) {
  const init = { method: method || "GET", headers: {} };
  if (init.method !== "GET") init.headers["X-CSRF-Token"] = document.body.dataset.csrf;
  return request(apiBase + path, init);
}

// el makes an element with text and attributes.
function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// changed reports whether data differs from what container shows, and
// remembers it: a list redrawn only when it changed keeps the keyboard's
// focus and the button under the pointer.
const shown = new WeakMap();
function changed(container, data) {
  const key = JSON.stringify(data);
  if (shown.get(container) === key) return false;
  shown.set(container, key);
  return true;
}

const when = (t) => (t ? new Date(t).toLocaleString() : "—");
// chatKey is a chat as the pages name it: a number without the server.
const chatKey = (jid) => (jid || "").replace(/@s\.whatsapp\.net$/, "");
const mediaURL = (id) => apiBase + "/media/" + encodeURIComponent(id);

function showBanners(ev) {
  const r = $("banner-restricted");
  r.hidden = !ev.restricted_until;
  r.textContent = ev.restricted_until ? "WhatsApp restricted sending until " + when(ev.restricted_until) + "; the queue waits." : "";
  $("banner-disk").hidden = ev.reason !== "disk_full";
  $("banner-outdated").hidden = ev.reason !== "client_outdated";
}

// --- pages and their refresh ---

const loaders = {
  overview: loadOverview, messages: loadMessages, chat: loadChat, receivers: loadReceivers, keys: loadKeys, admin: loadAudit,
  calls: () => loadCalls(), // calls.js, loaded after this file
};
let loading = null; // the running load
let again = false; // a change arrived during it

function currentPage() {
  const name = location.hash.slice(1).split("/")[0];
  return loaders[name] ? name : "overview";
}

function route() {
  const page = currentPage();
  document.body.dataset.page = page; // the data pages use a wide screen's width
  document.querySelectorAll(".page").forEach((p) => { p.hidden = p.id !== "page-" + page; });
  document.querySelectorAll("nav a").forEach((a) => {
    if (a.dataset.page === page) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  refresh();
}

// refresh reads the current page again; changes during a read read once more.
function refresh() {
  if (loading) { again = true; return; }
  loading = loaders[currentPage()]().catch((err) => say(String(err), true)).finally(() => {
    loading = null;
    if (again) { again = false; refresh(); }
  });
}

// trafficChanged reads the page again when it shows traffic; the admin
// page does not, and its buttons stay where they are under the pointer.
function trafficChanged() {
  window.trafficTimes.push(Date.now());
  if (currentPage() !== "admin") refresh();
}

// --- overview ---

async function loadOverview() {
  const [state, days, failed] = await Promise.all([
    api("/state"), api("/analytics/delivery?days=14"),
    api("/messages?status=Failed&limit=100&since=" + encodeURIComponent(new Date().toISOString().slice(0, 10) + "T00:00:00Z")),
  ]);
  if (state.ok && state.body.send_queue) {
    const q = state.body.send_queue;
    $("queue-depth").textContent = q.depth + (q.depth === 1 ? " message waits" : " messages wait");
    $("pace").textContent = "at most " + q.rate;
    $("next-send").textContent = q.next_send_at ? when(q.next_send_at) : "nothing waits";
  }
  if (days.ok && changed($("chart"), days.body)) drawChart(days.body);
  if (failed.ok && changed($("failures"), failed.body.messages)) {
    const list = $("failures");
    list.replaceChildren(...failed.body.messages.map((m) => el("li",
      when(m.updated_at) + " · " + chatKey(m.recipient) + " · " + m.type + ": " + (m.last_error || "failed"))));
    if (!failed.body.messages.length) list.append(el("li", "No failures today."));
  }
}

// drawChart draws delivered and failed per day as SVG bars.
function drawChart(days) {
  const ns = "http://www.w3.org/2000/svg";
  const w = 320, h = 140, pad = 20, slot = (w - pad) / Math.max(days.length, 1);
  const most = Math.max(0, ...days.map((d) => Math.max(d.success, d.failed)));
  const top = Math.max(1, most); // the scale of an empty chart
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h + 16}`);
  svg.setAttribute("aria-hidden", "true");
  const bar = (x, v, cls, label) => {
    const r = document.createElementNS(ns, "rect");
    const bh = Math.round((v / top) * h);
    Object.entries({ x, y: h - bh, width: Math.max(slot / 2 - 1, 1), height: bh, class: cls }).forEach(([k, val]) => r.setAttribute(k, val));
    const title = document.createElementNS(ns, "title");
    title.textContent = label;
    r.append(title);
    svg.append(r);
  };
  days.forEach((d, i) => {
    const x = pad + i * slot;
    bar(x, d.success, "delivered", d.day + ": " + d.success + " delivered");
    bar(x + slot / 2, d.failed, "failed", d.day + ": " + d.failed + " failed");
    if (i % 3 === days.length % 3 - 1 || i === days.length - 1) {
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", i === days.length - 1 ? w : x); t.setAttribute("y", h + 13);
      if (i === days.length - 1) t.setAttribute("text-anchor", "end");
      t.textContent = d.day.slice(5);
      svg.append(t);
    }
  });
  $("chart").replaceChildren(svg);
  const sum = (k) => days.reduce((a, d) => a + d[k], 0);
  $("chart-summary").textContent = `Last ${days.length} days: ${sum("success")} delivered (green), ${sum("failed")} failed (red); ${most} at most in a day.`;
}

// --- messages ---

// entries reads both directions, newest first: outgoing rows and received
// events, each as {when, chat, text, status, reason, retries, id, dir, raw};
// chat (optional) keeps one chat's, filtered by the API. A chat the API
// refuses throws BadChat.
async function entries(status, direction, chat) {
  const base = "/messages?limit=200" + (chat ? "&chat=" + encodeURIComponent(chat) : "");
  const reads = [];
  if (direction !== "in") reads.push(api(base + (status ? "&status=" + status : "")));
  if (direction !== "out" && !status) reads.push(api(base + "&direction=in"));
  const out = [];
  for (const a of await Promise.all(reads)) {
    if (!a.ok && a.body.error && a.body.error.code === "invalid_chat") throw new BadChat(problem(a));
    if (!a.ok) { say(problem(a), true); continue; }
    for (const m of a.body.messages) out.push(m.webhook_id !== undefined ? received(m) : sent(m));
  }
  // By time, not by text: the log's times have milliseconds, the events' not.
  return out.sort((a, b) => Date.parse(b.when) - Date.parse(a.when));
}

class BadChat extends Error {}

const sent = (m) => ({ when: m.created_at, chat: chatKey(m.recipient), text: describeSent(m), status: m.status,
  reason: m.status === "Failed" ? m.last_error : "", retries: m.retry_count, id: m.id, dir: "out", raw: m });
const received = (e) => ({ when: e.received_at, chat: chatKey(e.chat), text: describe(e), status: "Received",
  reason: "", retries: "", id: e.whatsapp_id, dir: "in", raw: e });

function describe(e) {
  if (e.event === "message.reaction") return "reacted " + (e.payload.emoji || "(removed)");
  if (e.event === "message.edit") return "edited: " + (e.payload.text || "");
  if (e.event === "message.revoke") return "deleted a message";
  if (e.event === "message.poll_vote") return "voted " + voteText(e.payload);
  return e.text || e.type;
}

const voteText = (p) => ((p.options || []).length ? p.options.join(", ") : "(vote taken back)");

// describeSent is what the account's own message said, as describe says a
// received one: its text or caption, else what it is.
function describeSent(m) {
  switch (m.type) {
    case "reaction": return "reacted " + (m.emoji || "(removed)");
    case "edit": return "edited: " + (m.text || "");
    case "revoke": return "deleted a message";
    case "poll": return m.poll ? "📊 " + m.poll.question : "poll";
    case "location": return m.location ? "📍 " + (m.location.name || m.location.latitude + ", " + m.location.longitude) : "location";
    case "contact": return "👤 " + (m.contact || "contact");
  }
  if (m.text) return m.text;
  return m.file_name ? m.type + ": " + m.file_name : m.type;
}

// names are the chats' names the bridge knows: a contact's push name from
// what it sent, a group's subject from the account's groups.
let groupNames = {}, groupsRead = 0;
function chatNames(rows) {
  const names = Object.assign({}, groupNames);
  for (const r of rows) {
    if (r.dir === "in" && !r.chat.endsWith("@g.us") && r.raw.push_name && !names[r.chat]) names[r.chat] = r.raw.push_name;
  }
  return names;
}

// readGroupNames reads the account's groups at most once a minute (the
// bridge caches them too), and only while linked: unlinked, none is known.
async function readGroupNames() {
  if (!window.linked || Date.now() - groupsRead < 60000) return;
  groupsRead = Date.now();
  const a = await request("/dashboard/groups");
  if (!a.ok) return;
  groupNames = {};
  for (const g of a.body) if (g.subject) groupNames[g.id] = g.subject;
}

// labelsByChat are the labels on each chat (WhatsApp Business), as the
// bridge read them from WhatsApp's app state: cheap to read (the bridge
// keeps them), so read with every load.
let labelsByChat = {};
async function readLabels() {
  const a = await api("/labels");
  if (!a.ok) return;
  labelsByChat = {};
  for (const l of a.body.labels || []) {
    for (const c of l.chats) (labelsByChat[c] = labelsByChat[c] || []).push({ name: l.name, color: l.color });
  }
}

// labelChips are a chat's labels, each in its WhatsApp colour (one of 20).
function labelChips(chat) {
  // The hue through the CSSOM: the page's CSP refuses style attributes.
  return (labelsByChat[chat] || []).map((l) => {
    const chip = el("span", l.name, { class: "label", title: "label " + l.name });
    chip.style.setProperty("--hue", String((l.color * 18) % 360));
    return chip;
  });
}

// channels are the channels the account follows or owns; reading them asks
// WhatsApp (and spends the pace of group actions), so at most once a
// minute, and only while linked.
let channels = null, channelsRead = 0;
async function readChannels() {
  if (!window.linked || Date.now() - channelsRead < 60000) return;
  channelsRead = Date.now();
  const a = await api("/channels");
  if (a.ok) channels = a.body.channels || [];
}

function drawChannels() {
  const list = $("channels");
  if (!changed(list, channels)) return;
  if (channels === null) { list.replaceChildren(el("li", window.linked ? "Reading…" : "Link a phone to see its channels.", { class: "note" })); return; }
  if (!channels.length) { list.replaceChildren(el("li", "The account follows no channel.", { class: "note" })); return; }
  list.replaceChildren(...channels.map((c) => {
    const li = el("li", null, { "data-channel": c.jid });
    li.append(el("strong", c.name), el("span", " · " + c.role + " · " + c.followers + " followers", { class: "meta" }));
    if (c.invite_link) li.append(el("br"), el("a", c.invite_link, { href: c.invite_link, rel: "noopener noreferrer", target: "_blank" }));
    return li;
  }));
}

// chatLabel is a chat as a person names it: its name, else its number.
const chatLabel = (names, c) => names[c] || (c.endsWith("@g.us") ? "group " + c.replace(/@g\.us$/, "") : "+" + c);

// chatFilter is the chat field as the API names a chat: the spaces, dashes
// and brackets a person types in a number dropped (a group's id keeps its
// dash).
function chatFilter(value) {
  const v = String(value || "").trim();
  return v.endsWith("@g.us") ? v : v.replace(/[\s\-()]/g, "");
}

async function loadMessages() {
  const f = new FormData($("filters"));
  const field = $("filter-chat");
  let rows = [], hint = "No messages.";
  // A chat that is none is not asked for: the field's pattern says so while
  // it is typed, and the API's invalid_chat if the pattern let one pass.
  try {
    if (field.validity.patternMismatch) throw new BadChat(field.title);
    rows = await entries(f.get("status"), f.get("direction"), chatFilter(f.get("chat")));
    field.removeAttribute("aria-invalid");
  } catch (err) {
    if (!(err instanceof BadChat)) throw err;
    field.setAttribute("aria-invalid", "true");
    hint = err.message;
  }
  await readGroupNames();
  const names = chatNames(rows);
  if (!changed($("log"), [hint, names, rows.map((r) => [r.id, r.status, r.reason, r.retries, r.text, r.chat])])) return;
  $("log").replaceChildren(...rows.map((r) => logRow(r, names)));
  if (!rows.length) {
    const tr = el("tr");
    tr.append(el("td", hint, { colspan: 5, id: "log-empty" }));
    $("log").append(tr);
  }
}

function logRow(r, names) {
  const tr = el("tr", null, { "data-id": r.id, "data-status": r.status, "data-dir": r.dir });
  const chat = el("td");
  chat.append(el("a", chatLabel(names, r.chat), { href: "#chat/" + encodeURIComponent(r.chat), title: r.chat }));
  const status = el("td", r.dir === "in" ? "↓ Received" : "↑ " + r.status, { class: "status " + r.status });
  if (r.reason) status.append(el("span", " — " + r.reason, { class: "reason" }));
  chat.dataset.label = "Chat";
  status.dataset.label = "Status";
  tr.append(el("td", when(r.when), { "data-label": "When" }), chat, el("td", r.text, { "data-label": "Message" }), status,
    el("td", String(r.retries), { "data-label": "Retries" }));
  const key = r.id + ":" + r.status;
  if (!window.rowTimes[key]) window.rowTimes[key] = Date.now();
  return tr;
}

// --- conversations ---

// loadChat lists the chats of the latest traffic and the thread of the
// chat in the URL, read by the API's chat filter: a chat with no recent
// traffic shows its thread too.
async function loadChat() {
  const current = decodeURIComponent(location.hash.split("/")[1] || "");
  const [all, said, calls, blocked] = await Promise.all([entries("", ""), current ? entries("", "", current) : [],
    readCalls(), blockedChats(), readGroupNames(), readLabels(), readChannels()]);
  const chats = [...new Set([current, ...all.map((r) => r.chat)].filter(Boolean))];
  const names = chatNames(all.concat(said));
  drawChannels();
  // Calls and blocks sit among the messages by time, newest first as read.
  const mine = said.concat(callsOf(calls, current)).sort((a, b) => Date.parse(b.when) - Date.parse(a.when));
  showBlock(current, blocked.has(current));
  if (!changed($("thread"), [current, chats, names, labelsByChat, mine.map((r) => [r.id, r.status, r.raw, r.text])])) return;
  $("chats").replaceChildren(...chats.map((c) => {
    const li = el("li");
    const a = el("a", chatLabel(names, c), { href: "#chat/" + encodeURIComponent(c), title: c, "data-chat": c });
    if (c === current) a.setAttribute("aria-current", "true");
    a.append(...labelChips(c));
    li.append(a);
    return li;
  }));
  const number = current.endsWith("@g.us") ? "" : " (+" + current + ")";
  $("thread-h").textContent = current ? "Chat with " + (names[current] ? names[current] + number : chatLabel(names, current)) : "Pick a chat";
  $("thread-labels").replaceChildren(...(current ? labelChips(current) : []));
  drawThread(mine.reverse());
}

// drawThread shows a chat oldest first. Reactions, edits, revokes and
// poll votes change the message they name by its WhatsApp id, whoever sent
// either of them.
function drawThread(rows) {
  const thread = $("thread");
  const byID = {}; // by WhatsApp id
  const parts = rows.map((r) => [r, r.dir === "in" ? incomingParts(r) : r.dir === "event" ? { text: r.text } : sentParts(r)]);
  // Every message first: a change may come in the same second as the
  // message it names, and the times of the two directions are not as fine.
  for (const [r, x] of parts) if (!x.change && r.raw.whatsapp_id) byID[r.raw.whatsapp_id] = bubbleOf(r, x);
  thread.replaceChildren();
  const quotes = [];
  for (const [r, x] of parts) {
    const target = byID[x.target];
    if (x.change && target) { change(target, x.change); continue; }
    const li = (!x.change && byID[r.raw.whatsapp_id]) || bubbleOf(r, x);
    if (x.quoted) quotes.push([li, x.quoted]);
    thread.append(li);
  }
  for (const [li, id] of quotes) {
    const q = byID[id] ? byID[id].querySelector(".text").textContent || byID[id].querySelector(".attachment, a.download, .media")?.textContent : "";
    li.querySelector(".meta").after(el("blockquote", "↩ " + (q || "an earlier message")));
  }
  if (!rows.length) thread.append(el("li", "Nothing in this chat yet."));
}

// bubbleOf is a message as a bubble: who and when, its attachment, its
// text, a poll's options, a sent message's status.
function bubbleOf(r, x) {
  const li = el("li", null, { class: "bubble " + r.dir, "data-id": r.id, "data-whatsapp-id": r.raw.whatsapp_id || "" });
  const who = r.dir === "in" ? (r.raw.push_name || r.chat) + " · " : r.dir === "out" ? "You · " : "";
  li.append(el("span", who + when(r.when), { class: "meta" }));
  if (x.media) li.append(x.media);
  li.append(el("p", x.text, { class: "text" }));
  if (x.options) {
    const options = el("ul", null, { class: "options" });
    options.append(...x.options.map((o) => el("li", o)));
    li.append(options, el("p", null, { class: "votes" }));
  }
  if (r.dir === "out") li.append(el("span", r.status + (r.reason ? " — " + r.reason : ""), { class: "status " + r.status }));
  return li;
}

// incomingParts is a received event as drawThread draws it: a change of
// another message (reaction, edit, revoke, vote), or a message.
function incomingParts(r) {
  const e = r.raw, p = e.payload || {};
  const x = { target: p.target_id, quoted: p.quoted, text: e.text, media: p.media ? mediaOf(e, p.media) : null };
  if (e.event !== "message.upsert") {
    x.change = { kind: e.event.replace(/^message\./, ""), emoji: p.emoji, text: p.text, options: p.options, who: e.push_name || r.chat };
    x.text = describe(e);
  }
  if (p.poll) { x.text = "📊 " + (p.poll.name || p.poll.question || e.text); x.options = (p.poll.options || []).map((o) => o.name || o); }
  return x;
}

// sentParts is the account's own message as drawThread draws it: its text,
// its attachment's name (the file is not kept once sent), its quote; an
// action changes its target.
function sentParts(r) {
  const m = r.raw;
  const x = { target: m.target_id, quoted: m.reply_to, text: m.text || (m.file_name ? "" : m.type) };
  if (["reaction", "edit", "revoke"].includes(m.type)) {
    x.change = { kind: m.type, emoji: m.emoji, text: m.text, who: "You" };
    x.text = describeSent(m);
  }
  if (m.file_name) x.media = el("p", "📎 " + m.file_name, { class: "attachment", title: m.mimetype || "" });
  if (m.poll) { x.text = "📊 " + m.poll.question; x.options = m.poll.options; }
  if (m.location || m.type === "contact") x.text = describeSent(m);
  return x;
}

function change(target, c) {
  if (c.kind === "reaction") {
    const old = target.querySelector(".reaction");
    if (old) old.remove();
    if (c.emoji) target.append(el("span", c.emoji, { class: "reaction", "aria-label": "reaction " + c.emoji }));
  } else if (c.kind === "edit") {
    target.querySelector(".text").textContent = c.text + " (edited)";
  } else if (c.kind === "revoke") {
    target.querySelector(".text").textContent = "This message was deleted.";
    target.querySelectorAll("img, audio, video, a.download, .attachment").forEach((m) => m.remove());
  } else if (c.kind === "poll_vote") {
    // A voter's latest vote replaces the earlier one.
    const votes = target.querySelector(".votes") || target.appendChild(el("p", null, { class: "votes" }));
    const mine = [...votes.children].find((v) => v.dataset.voter === c.who);
    const line = el("span", c.who + " voted " + voteText(c), { class: "vote", "data-voter": c.who });
    if (mine) mine.replaceWith(line); else votes.append(line);
  }
}

// mediaOf is an attachment as a person sees it: images and stickers inline,
// audio and video playable, documents to download.
function mediaOf(e, m) {
  if (!m.id) return el("p", "(" + e.type + " not stored)", { class: "note" });
  const src = mediaURL(m.id);
  switch (e.type) {
    case "image": case "sticker": {
      const img = el("img", null, { src, alt: e.type === "sticker" ? "sticker" : (e.text || "photo"), class: "media", loading: "lazy" });
      retryWhilePending(img, src);
      return img;
    }
    case "audio": return el("audio", null, { src, controls: "", "aria-label": "voice message" });
    case "video": return el("video", null, { src, controls: "", class: "media", "aria-label": "video" });
    default: return el("a", "Download " + (m.file_name || e.type), { href: src, download: m.file_name || "", class: "download" });
  }
}

// retryWhilePending asks again for an attachment still downloading.
function retryWhilePending(img, src) {
  let tries = 0;
  img.addEventListener("error", () => {
    if (++tries > 10) return;
    setTimeout(() => { img.src = src + "?try=" + tries; }, 1000);
  });
}

// --- receivers ---

// loadReceivers shows each subscription with its health and its dead
// letters, and offers the enabled ones to the replay.
async function loadReceivers() {
  const [subs, failed] = await Promise.all([api("/subscriptions"), api("/webhooks/failed")]);
  const bad = [subs, failed].find((a) => !a.ok);
  if (bad) { say(problem(bad), true); return; }
  if (!changed($("receivers"), [subs.body, failed.body])) return;
  const ids = new Set(subs.body.map((s) => s.id));
  const items = subs.body.map((s) => receiver(s, failed.body.filter((d) => d.subscription === s.id)));
  const orphans = failed.body.filter((d) => !ids.has(d.subscription));
  if (orphans.length) {
    const li = el("li", null, { class: "card receiver" });
    li.append(el("h3", "Deleted receivers"), deadLetters("deleted receivers", orphans));
    items.push(li);
  }
  $("receivers").replaceChildren(...items);
  if (!items.length) $("receivers").append(el("li", "No receivers: set WEBHOOK_URL or add a subscription.", { class: "card" }));
  replayTargets(subs.body);
}

// receiver is a subscription as a card: where it delivers (without the
// target's query, which may carry a token), its health, its dead letters.
function receiver(s, dead) {
  const h = s.health;
  const li = el("li", null, { class: "card receiver " + h.state, "data-subscription": s.id, "data-state": h.state });
  const t = new URL(s.target);
  li.append(el("h3", s.id + (s.id === "default" ? " (WEBHOOK_URL)" : "")),
    el("p", t.protocol + "//" + t.host + t.pathname + " · " + s.format + " · " + (s.events.length ? s.events.join(", ") : "every event"), { class: "note" }),
    el("p", [h.state, h.pending + " pending", h.dead_letters + " dead letter" + (h.dead_letters === 1 ? "" : "s")].join(" · "),
      { class: "health " + h.state }));
  if (h.last_error) li.append(el("p", "Last failure " + when(h.last_failure_at) + ": " + h.last_error, { class: "reason" }));
  li.append(deadLetters(s.id, dead));
  return li;
}

function deadLetters(name, dead) {
  const list = el("ul", null, { class: "rows", "aria-label": "Dead letters of " + name });
  list.replaceChildren(...dead.map((d) => {
    const li = el("li", `${d.event} · ${when(d.created_at)} · ${d.attempts} attempts · ${d.last_error} `, { class: "dead", "data-id": d.id });
    const b = el("button", "Redeliver", { type: "button", class: "secondary", "aria-label": "Redeliver " + d.event + " " + d.webhook_id });
    once(b, () => act("/webhooks/" + d.id + "/redeliver", "POST", "Redelivering " + d.event + "."));
    li.append(b);
    return li;
  }));
  if (!dead.length) list.append(el("li", "No dead letters."));
  return list;
}

// replayTargets offers the enabled subscriptions to the replay, keeping
// the one chosen.
function replayTargets(subs) {
  const to = $("replay-to"), keep = to.value;
  to.replaceChildren(el("option", "Every receiver", { value: "" }),
    ...subs.filter((s) => s.enabled).map((s) => el("option", s.id, { value: s.id })));
  to.value = [...to.options].some((o) => o.value === keep) ? keep : "";
}

// act runs a change and says how it went; the page reads again.
async function act(path, method, done) {
  const a = await api(path, method);
  if (!a.ok) { say(problem(a), true); return false; }
  say(done, false);
  refresh();
  return true;
}

// --- keys and approvals ---

// loadKeys shows the sends awaiting approval, with Approve and Reject, and
// the scoped keys, with Revoke.
async function loadKeys() {
  const [held, keys] = await Promise.all([api("/approvals"), api("/keys")]);
  const bad = [held, keys].find((a) => !a.ok);
  if (bad) { say(problem(bad), true); return; }
  if (changed($("approvals"), held.body)) {
    $("approvals").replaceChildren(...held.body.messages.map(heldRow));
    if (!held.body.messages.length) $("approvals").append(el("li", "Nothing awaits approval."));
  }
  if (changed($("keys"), keys.body)) {
    $("keys").replaceChildren(...keys.body.keys.map(keyRow));
    if (!keys.body.keys.length) $("keys").append(el("li", "No keys but API_KEY."));
  }
}

function heldRow(m) {
  const li = el("li", `${chatKey(m.recipient)} · ${m.type} · ${when(m.created_at)} · ${m.text} `, { "data-id": m.id });
  const ok = el("button", "Approve", { type: "button", "aria-label": "Approve the message to " + chatKey(m.recipient) });
  const no = el("button", "Reject", { type: "button", class: "danger", "aria-label": "Reject the message to " + chatKey(m.recipient) });
  once(ok, () => act("/approvals/" + encodeURIComponent(m.id) + "/approve", "POST", "Approved: it goes with the queue."));
  once(no, () => act("/approvals/" + encodeURIComponent(m.id) + "/reject", "POST", "Rejected: nothing is sent."));
  li.append(ok, " ", no);
  return li;
}

function keyRow(k) {
  const parts = [k.name, k.scopes.join("+"), k.chats.length ? k.chats.join(", ") : "every chat",
    k.budget ? k.budget + "/h" : "the pace", k.approval ? "approval" : "no approval",
    k.expires_at ? "until " + when(k.expires_at) : "no expiry", k.source];
  const li = el("li", parts.join(" · ") + " ", { "data-key": k.name });
  const b = el("button", "Revoke", { type: "button", class: "danger", "aria-label": "Revoke the key " + k.name });
  once(b, async () => {
    if (!await confirmed("Revoke the key " + k.name + "? Its next request is refused.")) return;
    await act("/keys/" + encodeURIComponent(k.name), "DELETE", "The key " + k.name + " is revoked.");
  });
  li.append(b);
  return li;
}

// createKey makes a key and shows its secret once: the bridge keeps only
// its hash.
async function createKey(form) {
  const f = new FormData(form);
  const body = { name: f.get("name"), scopes: f.getAll("scopes"), approval: f.get("approval") === "on",
    budget: Number(f.get("budget") || 0),
    chats: String(f.get("chats") || "").split("\n").map((c) => c.trim()).filter((c) => c) };
  if (f.get("expires")) body.expires_at = new Date(f.get("expires") + "Z").toISOString().replace(/\.\d+Z$/, "Z");
  const a = await request(apiBase + "/keys", { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-CSRF-Token": document.body.dataset.csrf } });
  if (!a.ok) { say(problem(a), true); return; }
  const secret = $("key-secret");
  secret.textContent = "The key " + a.body.name + ": " + a.body.key + " — copy it now, it is not shown again.";
  secret.hidden = false;
  form.reset();
  say("Key " + a.body.name + " created.", false);
  refresh();
}

// --- admin ---

// confirmed asks in the page's dialog; true when confirmed. One question
// at a time: the dialog's close answers the latest.
let answer = null;
function confirmed(text) {
  const d = $("confirm");
  $("confirm-text").textContent = text;
  d.returnValue = "";
  d.showModal();
  return new Promise((resolve) => { answer = resolve; });
}

function answered() {
  const resolve = answer;
  answer = null;
  if (resolve) resolve($("confirm").returnValue === "ok");
}

// once runs a button's action with the button disabled meanwhile, so that a
// second click cannot run it twice.
function once(button, action) {
  button.addEventListener("click", () => {
    button.disabled = true;
    action().catch((err) => say(String(err), true)).finally(() => { button.disabled = false; });
  });
}

// isoWeek is t's ISO week as the audit log names it: 2026-W48.
function isoWeek(t) {
  const d = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
  d.setUTCDate(d.getUTCDate() + 4 - (d.getUTCDay() || 7));
  const week = Math.ceil(((d - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000 + 1) / 7);
  return d.getUTCFullYear() + "-W" + String(week).padStart(2, "0");
}

async function loadAudit() {
  const week = $("audit-week").value || isoWeek(new Date());
  const a = await api("/audit?week=" + encodeURIComponent(week));
  if (!a.ok) { say(problem(a), true); return; }
  if (!changed($("audit"), [week, a.body])) return;
  $("audit").replaceChildren(...a.body.slice().reverse().map((r) => {
    const li = el("li", `${when(r.time)} · ${r.action} · ${r.outcome} · ${r.client}${r.detail ? " · " + r.detail : ""} `, { "data-id": r.id });
    const b = el("button", "Delete", { type: "button", class: "secondary", "aria-label": "Delete audit record " + r.action + " of " + when(r.time) });
    once(b, async () => {
      if (!await confirmed("Delete the audit record " + r.action + " of " + when(r.time) + "? This cannot be undone.")) return;
      await act("/audit/" + encodeURIComponent(r.id) + "?week=" + encodeURIComponent(week), "DELETE", "Audit record deleted.");
    });
    li.append(b);
    return li;
  }));
  if (!a.body.length) $("audit").append(el("li", "No records this week."));
}

async function purge(form) {
  const f = new FormData(form);
  if (!await confirmed(`Delete the ${f.get("level")} log file of ${f.get("date")}? This cannot be undone.`)) return;
  await act("/logs?" + new URLSearchParams({ date: f.get("date"), level: f.get("level") }), "DELETE",
    `The ${f.get("level")} log of ${f.get("date")} is deleted.`);
}

async function replay(form) {
  const since = new Date($("replay-since").value + "Z").toISOString().replace(/\.\d+Z$/, "Z");
  const to = new FormData(form).get("subscription");
  const a = await api("/webhooks/replay?since=" + encodeURIComponent(since) + (to ? "&subscription=" + encodeURIComponent(to) : ""), "POST");
  if (!a.ok) { say(problem(a), true); return; }
  say(`Replaying ${a.body.enqueued} events to ${to || "every receiver"} (${a.body.already_pending} were still pending).`, false);
}

function startPages() {
  $("purge-date").value = new Date().toISOString().slice(0, 10);
  $("confirm").addEventListener("close", answered);
  const on = (id, f) => $(id).addEventListener("submit", (e) => { e.preventDefault(); f(e.target).catch((err) => say(String(err), true)); });
  on("purge-form", purge);
  on("replay-form", replay);
  on("audit-form", () => loadAudit());
  on("key-form", createKey);
  $("filters").addEventListener("input", () => refresh());
  $("filters").addEventListener("submit", (e) => e.preventDefault());
  window.addEventListener("hashchange", route);
  startCalls();
  route();
}
