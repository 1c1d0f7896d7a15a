// The dashboard's behaviour: the live state from /dashboard/events, and the
// forms submitted with fetch so that the page never reloads. The CSRF token
// travels in each form's hidden field, and in a header on the data pages'
// changes (pages.js). Pages are the hash's: #overview, #messages,
// #chat/<chat>, #receivers, #admin.
"use strict";

const $ = (id) => document.getElementById(id);
const labels = {
  unpaired: "Not linked", pairing: "Waiting for a phone to link", connecting: "Connecting…",
  connected: "Connected", disconnected: "Disconnected", logged_out: "Logged out",
};

// For the browser test and the rotation figure: per QR image URL, when the
// bridge received the code (since), when its event reached the page (event)
// and when the image finished loading (shown), in ms since the epoch.
window.qrTimes = {};

function showState(ev) {
  const state = $("state");
  let text = labels[ev.state] || ev.state;
  if (ev.reason) text += " (" + ev.reason.replace(/_/g, " ") + ")";
  if (state.textContent !== text) state.textContent = text; // aria-live announces changes only
  state.className = ev.state;
  state.dataset.state = ev.state;
  $("account").textContent = ev.account ? "+" + ev.account + (ev.push_name ? " (" + ev.push_name + ")" : "") : "—";
  $("heartbeat").textContent = ev.heartbeat_age < 0 ? "never" : ev.heartbeat_age + " s ago";
  // WhatsApp's restriction of sending: the queue holds until then.
  $("restricted").textContent = ev.restricted_until ? new Date(ev.restricted_until).toLocaleString() + " (WhatsApp's restriction; the queue is kept)" : "—";
  $("restricted").hidden = $("restricted-dt").hidden = !ev.restricted_until;
  $("pairing").hidden = ev.connected;
  if (ev.connected && !window.linked && typeof refresh === "function") {
    window.linked = true;
    refresh(); // the chats' names: the groups are known once linked
  }
  window.linked = ev.connected;
  showBanners(ev);
  const wasHidden = $("linked").hidden;
  $("linked").hidden = !ev.connected;
  if (ev.connected && wasHidden) {
    say("", false); // what the pairing said is over
    loadGroups().catch((err) => say(String(err), true));
  }
  const img = $("qr");
  if (ev.qr && !ev.connected) {
    if (img.getAttribute("src") !== ev.qr) {
      window.qrTimes[ev.qr] = { since: ev.qr_since, event: Date.now() };
      img.src = ev.qr;
    }
    $("qr-box").hidden = false;
  } else {
    $("qr-box").hidden = true;
    img.removeAttribute("src");
  }
}

function say(text, isError) {
  const m = $("message");
  m.textContent = text;
  m.className = isError ? "error" : "";
}

// request sends a request and returns the answer's status and JSON body
// ({} when the body is not JSON, e.g. a proxy's error page).
async function request(url, init) {
  const resp = await fetch(url, init);
  let body = {};
  try { body = await resp.json(); } catch (e) { /* not JSON */ }
  return { ok: resp.ok, status: resp.status, body };
}

// problem is the message of an error answer: {"error": {"code", "message"}}.
function problem(answer) {
  return (answer.body.error && answer.body.error.message) || "Failed (" + answer.status + ")";
}

async function loadGroups() {
  const list = $("groups");
  const answer = await request("/dashboard/groups");
  const body = answer.body;
  list.replaceChildren();
  if (!answer.ok) { say(problem(answer), true); return; }
  for (const g of body) {
    const li = document.createElement("li");
    li.textContent = g.subject + " — " + g.participants + " members";
    list.append(li);
  }
  if (body.length === 0) list.append(Object.assign(document.createElement("li"), { textContent: "No groups." }));
}

async function submit(form) {
  const answer = await request(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)) });
  const body = answer.body;
  const action = form.dataset.action;
  // A one-time code is spent whether it was accepted or refused.
  form.querySelectorAll("input[name=code]").forEach((i) => { i.value = ""; });
  if (!answer.ok) { say(problem(answer), true); return; }
  if (action === "signout") { location.assign("/dashboard/"); return; }
  // Shown as WhatsApp shows it on the phone: two groups of four.
  if (action === "pairing-code") $("pairing-code").textContent = body.code.slice(0, 4) + "-" + body.code.slice(4);
  say(body.message || "Done.", false);
}

document.addEventListener("DOMContentLoaded", () => {
  $("qr").addEventListener("load", (e) => {
    const t = window.qrTimes[e.target.getAttribute("src")];
    if (t) t.shown = Date.now();
  });
  document.querySelectorAll("form[data-action]").forEach((f) => f.addEventListener("submit", (e) => {
    e.preventDefault();
    submit(f).catch((err) => say(String(err), true));
  }));
  $("groups-refresh").addEventListener("click", () => loadGroups().catch((err) => say(String(err), true)));
  const es = new EventSource("/dashboard/events");
  es.addEventListener("state", (e) => showState(JSON.parse(e.data)));
  es.addEventListener("traffic", (e) => trafficChanged(JSON.parse(e.data)));
  startPages();
  es.addEventListener("error", () => {
    // CLOSED: the bridge refused the stream (signed out, expired, restarted),
    // so sign in again; otherwise the browser reconnects by itself.
    if (es.readyState === EventSource.CLOSED) { location.assign("/dashboard/"); return; }
    $("state").textContent = "Reconnecting to the bridge…";
  });
});
