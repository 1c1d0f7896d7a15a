// Calls and blocks: the Calls page, the calls inside a conversation, and a
// contact's block state in the conversation's header. They come from the
// event log (call.offer, call.ended, contact.blocked), which the dashboard
// reads through /dashboard/api/calls.
"use strict";

// readCalls is the latest calls and blocks as rows, newest first: a call's
// offer and end folded into one row.
async function readCalls() {
  const a = await api("/calls");
  if (!a.ok) { say(problem(a), true); return []; }
  const byID = new Map(), rows = [];
  for (const e of a.body.events.slice().reverse()) {
    if (e.event === "contact.blocked") {
      rows.push({ kind: "block", when: e.timestamp, chat: chatKey(e.contact), blocked: e.blocked, by: e.by });
      continue;
    }
    let r = byID.get(e.call_id);
    if (!r) {
      r = { kind: "call", when: e.timestamp, chat: chatKey(e.from), video: e.video, outcome: "ringing", rejected: "", id: e.call_id };
      byID.set(e.call_id, r);
      rows.push(r);
    }
    if (e.event === "call.ended") r.outcome = e.reason;
    if (e.rejected) r.rejected = e.rejected;
  }
  return rows.reverse();
}

const callOutcomes = {
  ringing: "Ringing", missed: "Missed", rejected: "Rejected", accepted_elsewhere: "Answered on the phone",
};

// callText says a call or a block as a person would.
function callText(r) {
  if (r.kind === "block") return (r.blocked ? "🚫 Blocked" : "✅ Unblocked") + (r.by === "phone" ? " on the phone" : " by the bridge");
  const why = r.rejected ? " (REJECT_CALLS " + r.rejected + ")" : "";
  return "📞 " + (callOutcomes[r.outcome] || r.outcome) + " " + (r.video ? "video call" : "voice call") + why;
}

async function loadCalls() {
  const [rows, all] = await Promise.all([readCalls(), entries("", ""), readGroupNames()]);
  const names = chatNames(all);
  if (!changed($("calls"), [names, rows])) return;
  $("calls").replaceChildren(...rows.map((r) => {
    const tr = el("tr", null, { "data-kind": r.kind, "data-chat": r.chat });
    const chat = el("td", null, { "data-label": "Chat" });
    chat.append(el("a", chatLabel(names, r.chat), { href: "#chat/" + encodeURIComponent(r.chat), title: r.chat }));
    tr.append(el("td", when(r.when), { "data-label": "When" }), chat, el("td", callText(r), { "data-label": "What" }));
    return tr;
  }));
  if (!rows.length) $("calls").append(el("tr", null).appendChild(el("td", "No calls or blocks yet.", { colspan: 3 })).parentNode);
}

// callsOf are the calls and blocks of one chat as thread rows.
const callsOf = (rows, chat) => rows.filter((r) => r.chat === chat).map((r) => ({ when: r.when, chat, dir: "event", text: callText(r), raw: {} }));

// blockedChats is the set of chats the account blocked (by number and LID).
async function blockedChats() {
  const a = await api("/blocklist");
  const out = new Set();
  if (!a.ok) return out;
  for (const b of a.body.blocked) for (const c of [b.contact, b.contact_lid, b.contact_phone]) if (c) out.add(chatKey(c));
  return out;
}

// showBlock shows the conversation's block state and offers the change;
// none for a group, or while nothing is linked.
function showBlock(chat, blocked) {
  const person = chat && !chat.endsWith("@g.us") && window.linked;
  const button = $("thread-block");
  $("thread-blocked").hidden = !(person && blocked);
  button.hidden = !person;
  button.textContent = blocked ? "Unblock" : "Block";
  button.dataset.chat = chat || "";
  button.dataset.blocked = blocked ? "true" : "false";
}

async function toggleBlock() {
  const b = $("thread-block"), chat = b.dataset.chat, blocked = b.dataset.blocked === "true";
  if (!chat) return;
  if (!blocked && !(await confirmed("Block " + chat + "? It can no longer message or call the account, and sends to it are refused."))) return;
  await act("/contacts/" + encodeURIComponent(chat) + "/block", blocked ? "DELETE" : "POST", (blocked ? "Unblocked " : "Blocked ") + chat + ".");
}

function startCalls() {
  once($("thread-block"), toggleBlock);
  // Calls and blocks are no message traffic: the pages that show them
  // look again every few seconds.
  setInterval(() => { if (["calls", "chat"].includes(currentPage())) refresh(); }, 5000);
}
