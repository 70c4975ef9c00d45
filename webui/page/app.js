// The page of `wave-orchestrator serve`. Everything shown comes from the
// lane (agent output, prompts, issue titles, questions): it is untrusted
// and only ever reaches the page as text nodes (textContent), never as
// markup.
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
  for (const c of children) {
    if (c === undefined || c === null) continue;
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

function age(iso) {
  if (!iso) return "";
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
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
    await renderTails(st);
    renderBacklog(bl);
    renderQuestions(qs || []);
    showError(null);
  } catch (err) {
    showError(err);
  } finally {
    refreshing = false;
    if (again) { again = false; refresh(); }
  }
}

function renderState(st) {
  if (!st) return;
  setText("lane", st.lane);
  setText("generated", new Date(st.generatedAt).toLocaleTimeString());
  const l = st.launcher;
  setText("launcher", l ? (l.alive ? "launcher running (pid " + l.pid + ")" : "launcher not running") : "no launcher");
  const root = document.getElementById("waves");
  const keep = new Map();
  for (const pre of root.querySelectorAll("pre[data-tail]")) keep.set(pre.dataset.tail, pre.textContent);
  root.replaceChildren();
  if (!st.waves.length) root.append(el("p", { class: "muted" }, "no wave has run in this lane yet"));
  for (const w of st.waves) {
    const box = el("div", { class: "wave", "data-wave": w.wave, "data-state": w.status });
    box.append(el("h3", {}, "Wave " + w.wave + " ", el("span", { class: "state", "data-state": w.status }, w.status),
      w.phase ? " · " + w.phase : "", " · attempt " + w.attempt));
    if (w.blockers.length) {
      box.append(el("p", {}, "blocked by: ", w.blockers.map(b => b.kind + " " + b.id + (b.summary ? " (" + b.summary + ")" : "")).join("; ")));
    }
    const t = el("table", {}, el("tr", {}, el("th", {}, "agent"), el("th", {}, "state"), el("th", {}, "attempt"), el("th", {}, "doing / output")));
    for (const a of w.agents) {
      const key = w.wave + "/" + a.id;
      const tail = el("pre", { "data-tail": key }, keep.get(key) || "");
      t.append(el("tr", { "data-agent": a.id, "data-wave": w.wave, "data-state": a.state },
        el("td", {}, a.id, el("br"), el("span", { class: "muted" }, a.title || a.role || "")),
        el("td", { class: "state", "data-state": a.state }, a.state, a.exitCode !== null && a.exitCode !== undefined ? " (exit " + a.exitCode + ")" : ""),
        el("td", {}, a.attempt),
        el("td", {}, el("div", { class: "muted" }, a.lastMarker || ""), tail)));
    }
    box.append(t);
    for (const f of w.failures) box.append(el("p", { class: "failure" }, "failed: " + f.agentId + " " + f.statusCode + " " + f.detail));
    root.append(box);
  }
}

// renderTails fills each agent's output tail.
async function renderTails(st) {
  if (!st) return;
  const jobs = [];
  for (const w of st.waves) {
    for (const a of w.agents) {
      if (!a.logPath) continue;
      const key = w.wave + "/" + a.id;
      jobs.push(fetch(api + "runs/" + encodeURIComponent(w.wave) + "/" + encodeURIComponent(a.id) + "/log?tail=12", { cache: "no-store" })
        .then(r => r.ok ? r.text() : "")
        .then(text => {
          const pre = document.querySelector('pre[data-tail="' + CSS.escape(key) + '"]');
          if (pre) { pre.textContent = safe(text.replace(sequences, "")); pre.scrollTop = pre.scrollHeight; }
        }).catch(() => {}));
    }
  }
  await Promise.all(jobs);
}

function renderBacklog(bl) {
  const root = document.getElementById("backlog");
  root.replaceChildren();
  if (!bl) { root.append(el("p", { class: "muted" }, "no backlog run in this lane yet")); return; }
  const t = bl.tally;
  root.append(el("p", {}, "run ", bl.run.id || "", " · ", el("span", { class: "state", "data-state": bl.state }, bl.state)));
  for (const p of bl.paused || []) root.append(el("p", { class: "paused", "data-executor": p.executor }, p.line));
  root.append(el("p", { class: "tally", id: "tally" },
    el("span", {}, "merged " + t.merged), el("span", {}, "in flight " + t.inFlight),
    el("span", {}, "blocked " + t.blocked), el("span", {}, "needs input " + t.needsInput), el("span", {}, "planned " + t.planned)));
  const tab = el("table", {}, el("tr", {}, el("th", {}, "issue"), el("th", {}, "state"), el("th", {}, "title"), el("th", {}, "detail")));
  for (const is of bl.issues) {
    tab.append(el("tr", { "data-issue": is.number, "data-state": is.state },
      el("td", {}, "#" + is.number), el("td", { class: "state", "data-state": is.state }, is.state),
      el("td", {}, is.title), el("td", {}, is.question || is.detail || "")));
  }
  root.append(tab);
}

function where(q) {
  if (q.issue !== null && q.issue !== undefined) return "issue #" + q.issue;
  return "wave " + q.wave + " · " + q.agentId + (q.attempt ? " (attempt " + q.attempt + ")" : "");
}

// renderQuestions keeps the box of a question whose state did not
// change, so a live update never takes away what a person is typing.
function renderQuestions(qs) {
  const root = document.getElementById("questions");
  const old = new Map();
  for (const box of root.querySelectorAll("[data-question]")) old.set(box.dataset.question, box);
  const pending = qs.filter(q => q.state !== "answered");
  setText("questions-count", pending.length ? "(" + pending.length + " waiting)" : "");
  document.getElementById("answer-off").hidden = about.allowAnswer || !pending.length;
  const order = pending.concat(qs.filter(q => q.state === "answered").reverse());
  const boxes = order.map(q => {
    const box = old.get(q.id);
    if (box && box.dataset.state === q.state) {
      box.querySelector(".asked").textContent = safe(askedLine(q));
      return box;
    }
    return questionBox(q);
  });
  if (!qs.length) boxes.push(el("p", { class: "muted" }, "no questions"));
  place(root, boxes);
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
    const ta = el("textarea", { "data-for": q.id, placeholder: "your answer", "aria-label": "answer to " + q.id });
    const btn = el("button", { type: "button", "data-answer": q.id }, "Answer");
    const msg = el("span", { class: "muted" });
    btn.addEventListener("click", () => answer(q.id, ta, btn, msg));
    box.append(ta, el("div", {}, btn, " ", msg));
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
