// The page of `wave-orchestrator serve`: its loading, the live updates
// and the questions (waves.js draws the waves and the backlog).
// Everything shown comes from the lane (agent output, prompts, issue
// titles, questions): it is untrusted and only ever reaches the page as
// text nodes (textContent), never as markup.
"use strict";

const api = "/api/v1/";
let about = { allowAnswer: false };
let refreshing = false, again = false;

// unsafeChar is internal/termtext's rule for what never reaches people
// raw (Unsafe), for the page: a Go test holds the two to one rule.
// Control characters (C0 but tab, newline and carriage return; DEL; C1),
// the line and paragraph separators and the invisible format characters
// (bidirectional overrides and isolates, zero-width spaces, tags), but
// keptFormat: the zero-width non-joiner and joiner scripts and emoji need.
const unsafeChar = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu;
const keptFormat = "\u200c\u200d";

// sequences are the well-formed escape sequences agents colour their
// output with (CSI; OSC, DCS, SOS, PM, APC ended by BEL or ST; short
// ones), dropped from log tails as internal/termtext.Line drops them.
const sequences = /\x1b(?:\[[\x20-\x3f]*[\x40-\x7e]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)|[\x20-\x2f]*[\x30-\x7e])/g;

// safe writes every character unsafeChar matches as a visible escape
// (\u202e), as the terminal views do: a bidirectional override in an
// agent's words cannot make the page show them in another order.
function safe(s) {
  return String(s).replace(unsafeChar, c => {
    if (keptFormat.includes(c)) return c;
    const n = c.codePointAt(0), hex = n.toString(16);
    if (n < 0x20 || n === 0x7f) return "\\x" + hex.padStart(2, "0");
    return n > 0xffff ? "\\U" + hex.padStart(8, "0") : "\\u" + hex.padStart(4, "0");
  });
}

// el builds an element; strings among the children become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === "") continue;
    e.append(c instanceof Node ? c : document.createTextNode(safe(c)));
  }
  return e;
}

function setText(id, text) { document.getElementById(id).textContent = safe(text); }

async function getJSON(path) {
  const r = await fetch(api + path, { credentials: "same-origin", cache: "no-store" });
  if (r.status === 404) return null;
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()));
  return r.json();
}

// dur is a short span: 45s, 12m05s, 3h07m.
function dur(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
}

// span is the time from start to end (now while it runs), "" unstarted.
function span(start, end) {
  if (!start) return "";
  return dur(((end ? Date.parse(end) : Date.now()) - Date.parse(start)) / 1000);
}

function age(iso) { return iso ? span(iso, null) : ""; }

// spent is a usage record in words: "$0.042 · 12.3k tok", "" unknown.
function spent(u) {
  if (!u) return "";
  const parts = [];
  if (u.costUsd !== null && u.costUsd !== undefined) {
    parts.push("$" + (u.costUsd < 1 ? u.costUsd.toFixed(3) : u.costUsd.toFixed(2)));
  }
  const tok = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"].reduce((n, k) => n + (u[k] || 0), 0);
  if (tok > 0) {
    parts.push((tok >= 1e6 ? (tok / 1e6).toFixed(2) + "M" : tok >= 1000 ? (tok / 1000).toFixed(1) + "k" : String(tok)) + " tok");
  }
  return parts.join(" · ");
}

function showError(err) {
  const e = document.getElementById("error");
  e.hidden = !err;
  e.textContent = err ? safe(err) : "";
}

// refresh reloads every document; calls during a refresh fold into one
// more refresh after it.
async function refresh() {
  if (refreshing) { again = true; return; }
  refreshing = true;
  try {
    const [st, bl, qs] = await Promise.all([getJSON("state"), getJSON("backlog"), getJSON("questions")]);
    renderState(st);
    renderBacklog(bl);
    renderQuestions(qs || []);
    await renderTails();
    document.body.dataset.loaded = "true";
    showError(null);
  } catch (err) {
    showError(err);
  } finally {
    refreshing = false;
    if (again) { again = false; refresh(); }
  }
}

function where(q) {
  if (q.issue !== null && q.issue !== undefined) return "issue #" + q.issue + (q.kind === "parked" ? " (parked)" : "");
  return "wave " + q.wave + " · " + q.agentId + (q.attempt ? " (attempt " + q.attempt + ")" : "");
}

// renderQuestions lists the questions that wait, each with its answer
// box, and folds the answered ones. A box whose question did not change
// is kept, so a live update never takes away what a person is typing.
function renderQuestions(qs) {
  const root = document.getElementById("questions");
  const old = new Map();
  for (const box of document.querySelectorAll("[data-question]")) old.set(box.dataset.question, box);
  const box = q => {
    const b = old.get(q.id);
    if (b && b.dataset.state === q.state) {
      b.querySelector(".asked").textContent = safe(askedLine(q));
      return b;
    }
    return questionBox(q);
  };
  const pending = qs.filter(q => q.state !== "answered");
  const answered = qs.filter(q => q.state === "answered").reverse();
  setText("questions-count", pending.length ? "(" + pending.length + " waiting)" : "");
  document.getElementById("answer-off").hidden = about.allowAnswer || !pending.length;
  const nodes = pending.map(box);
  if (!pending.length) nodes.push(el("p", { class: "muted" }, answered.length ? "no question waits" : "no questions"));
  if (answered.length) {
    let fold = root.querySelector("details.answered");
    if (!fold) fold = el("details", { class: "answered" }, el("summary", {}), el("div"));
    fold.firstElementChild.textContent = safe(answered.length + " answered");
    place(fold.lastElementChild, answered.map(box));
    nodes.push(fold);
  }
  place(root, nodes);
}

// place makes nodes root's children in order, moving only what is out of
// place: a node taken out of the page, even for a moment, loses focus
// and what is being typed into it.
function place(root, nodes) {
  nodes.forEach((n, i) => {
    if (root.children[i] !== n) root.insertBefore(n, root.children[i] || null);
  });
  while (root.children.length > nodes.length) root.lastElementChild.remove();
}

function askedLine(q) {
  return " · " + where(q) + " · asked " + age(q.askedAt) + " ago" + (q.blocking ? " · blocking" : "") + " · ";
}

function questionBox(q) {
  const box = el("div", { class: "question", "data-question": q.id, "data-state": q.state },
    el("div", {}, el("span", { class: "state", "data-state": q.state }, q.state), el("span", { class: "asked" }, askedLine(q)), el("code", {}, q.id)),
    el("p", { class: "text" }, q.text));
  if (q.context) box.append(el("pre", { class: "context" }, q.context));
  if (q.state === "answered") {
    box.append(el("p", { class: "answer" }, "answer" + (q.operator ? " from " + q.operator : "") + ": ", q.answer));
  } else if (about.allowAnswer) {
    const ta = el("textarea", { "data-for": q.id, placeholder: "your answer (Ctrl+Enter sends)", "aria-label": "answer to " + q.id });
    const btn = el("button", { type: "button", "data-answer": q.id }, "Answer");
    const msg = el("span", { class: "muted" });
    btn.addEventListener("click", () => answer(q.id, ta, btn, msg));
    ta.addEventListener("keydown", e => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        if (!btn.disabled) answer(q.id, ta, btn, msg);
      }
    });
    box.append(ta, el("div", {}, btn, " ", msg));
  } else {
    box.append(el("p", { class: "muted" }, "answer in a terminal: ", el("code", {}, "wave-orchestrator answer " + q.id + " \"…\"")));
  }
  return box;
}

async function answer(id, ta, btn, msg) {
  const text = ta.value.trim();
  if (!text) { msg.textContent = "type an answer first"; return; }
  btn.disabled = true;
  msg.textContent = "sending…";
  try {
    const r = await fetch(api + "questions/" + encodeURIComponent(id) + "/answer", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ answer: text }),
    });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || String(r.status));
    ta.value = "";
    msg.textContent = "answered";
    refresh();
  } catch (err) {
    msg.textContent = safe("not answered: " + err.message);
    btn.disabled = false;
  }
}

function connect() {
  const conn = document.getElementById("conn");
  const es = new EventSource(api + "events");
  es.addEventListener("hello", () => { conn.textContent = "live"; conn.dataset.state = "open"; refresh(); });
  for (const name of ["lane", "backlog", "coordination", "change", "resync"]) {
    es.addEventListener(name, () => refresh());
  }
  es.onerror = () => { conn.textContent = "reconnecting…"; conn.dataset.state = "closed"; };
}

async function start() {
  try {
    about = (await getJSON("about")) || about;
  } catch (err) {
    showError(err);
  }
  connect();
  // Ages and liveness move without any file changing (a launcher that
  // exited leaves its lock file as it was): read again now and then.
  setInterval(refresh, 10000);
}

start();
