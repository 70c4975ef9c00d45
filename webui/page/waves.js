// The waves and the backlog on serve's page. A lane of many waves stays
// one screen: the running (else newest) wave first and open, the others
// folded to their header line; every agent's output folded behind its
// row's button. What a person opens or folds stays so across updates.
"use strict";

const waveChoice = new Map(); // wave → open, as a person left it
const tailOpen = new Set();   // outputs a person opened: "wave/agent", "issue/N"
const tailText = new Map();   // their last text, kept across redraws
const drawn = new Map();      // wave → {sig, box}: a wave that did not change keeps its box

// A wave a launcher works on (or left unfinished) comes first.
function activeWave(w) {
  return w.status === "running" || w.status === "waiting-for-input" || w.status === "interrupted";
}

function orderWaves(waves) {
  return waves.slice().sort((a, b) => (activeWave(b) - activeWave(a)) || (b.wave - a.wave));
}

function renderState(st) {
  if (!st) return;
  setText("lane", st.lane);
  setText("generated", new Date(st.generatedAt).toLocaleTimeString());
  const l = st.launcher;
  setText("launcher", l ? (l.alive ? "launcher running (pid " + l.pid + ")" : "launcher not running") : "no launcher");
  const waves = orderWaves(st.waves);
  setText("waves-count", waves.length ? "(" + waves.length + ")" : "");
  const lane = [];
  if (waves.length) lane.push(waves.length + (waves.length === 1 ? " wave" : " waves"));
  if (waves.length && activeWave(waves[0])) lane.push("wave " + waves[0].wave + " " + waves[0].status);
  if (spent(st.usage)) lane.push("waves spent " + spent(st.usage));
  setText("summary", lane.join(" · "));
  // A lane of the backlog alone shows it before the empty waves.
  document.getElementById("waves-section").classList.toggle("empty", !waves.length);
  const root = document.getElementById("waves");
  if (!waves.length) {
    root.replaceChildren(el("p", { class: "muted" }, "no wave has run in this lane yet"));
    return;
  }
  // A finished wave's box stays as it was (what a person selected or
  // scrolled in it too); one that changed, or runs (its times move), is
  // drawn again.
  const boxes = waves.map((w, i) => {
    const sig = JSON.stringify(w) + (i === 0);
    const old = drawn.get(w.wave);
    if (old && old.sig === sig && !activeWave(w)) return old.box;
    const box = waveBox(w, i === 0);
    drawn.set(w.wave, { sig, box });
    return box;
  });
  if (root.querySelector("p")) root.replaceChildren();
  place(root, boxes);
}

// tally is the agents by how far they got: "18 ok · 2 running".
function tally(agents) {
  const n = {};
  for (const a of agents) {
    const k = a.state === "completed" || a.state === "reused" ? "ok" : a.state === "launching" ? "running" : a.state;
    n[k] = (n[k] || 0) + 1;
  }
  return Object.entries(n).map(([k, v]) => v + " " + k).join(" · ");
}

function waveBox(w, first) {
  const box = el("details", { class: "wave", "data-wave": w.wave, "data-state": w.status });
  box.open = waveChoice.has(w.wave) ? waveChoice.get(w.wave) : first;
  const sum = el("summary", {},
    el("span", { class: "name" }, "Wave " + w.wave), " ",
    el("span", { class: "state", "data-state": w.status }, w.status),
    activeWave(w) && w.phase ? el("span", { class: "part" }, w.phase) : null,
    el("span", { class: "part" }, "attempt " + w.attempt + "/" + w.maxAttempts),
    el("span", { class: "part" }, w.agents.length + " agents: " + tally(w.agents)),
    w.startedAt ? el("span", { class: "part", "data-elapsed": "" }, span(w.startedAt, w.finishedAt)) : null,
    spent(w.usage) ? el("span", { class: "part", "data-spent": "" }, spent(w.usage)) : null,
    w.closure.length ? el("span", { class: "stages" }, w.closure.map(stageChip)) : null);
  // A click on the header is a person's choice, kept across updates.
  sum.addEventListener("click", () => waveChoice.set(w.wave, !box.open));
  box.append(sum);
  for (const p of w.paused || []) {
    box.append(el("p", { class: "paused", "data-executor": p.executor }, "paused: " + p.executor + " usage limit" +
      (p.until ? " until " + new Date(p.until).toLocaleTimeString() : "") + (p.agents && p.agents.length ? " (" + p.agents.join(", ") + ")" : "") +
      (p.detail ? ": " + p.detail : "")));
  }
  if (w.blockers.length) {
    box.append(el("p", { class: "blockers" }, "blocked by: ", w.blockers.map(b => b.kind + " " + b.id + (b.summary ? " (" + b.summary + ")" : "")).join("; ")));
  }
  for (const s of w.closure) {
    if (s.detail && s.state !== "passed") box.append(el("p", { class: "muted" }, "closure " + s.phase + " " + s.state + ": " + s.detail));
  }
  for (const f of w.failures) box.append(el("p", { class: "failure" }, "failed: " + (f.agentId || f.gate) + " " + f.statusCode + " " + f.detail));
  box.append(agentTable(w));
  return box;
}

// stageMark is a closure stage's state at a glance (the chip's title and
// colour say it in words).
const stageMark = { passed: "✓", failed: "✗", running: "▶", skipped: "–", pending: "○" };

function stageChip(s) {
  const who = s.agents && s.agents.length ? " (" + s.agents.join(", ") + ")" : "";
  return el("span", { class: "stage state", "data-state": s.state, "data-stage": s.phase, title: safe(s.phase + " " + s.state + who + (s.detail ? ": " + s.detail : "")) },
    s.phase + " " + (stageMark[s.state] || s.state));
}

function agentTable(w) {
  const t = el("table", { class: "agents" }, el("tr", {},
    ["agent", "state", "att", "elapsed", "spent", "doing", ""].map(h => el("th", {}, h))));
  for (const a of w.agents) {
    const key = w.wave + "/" + a.id;
    const exit = a.exitCode !== null && a.exitCode !== undefined ? " (exit " + a.exitCode + ")" : "";
    const row = el("tr", { "data-agent": a.id, "data-wave": w.wave, "data-state": a.state },
      el("td", { class: "who" }, a.id, " ", el("span", { class: "muted" }, a.title || a.role || "")),
      el("td", { class: "state", "data-state": a.state }, a.state, exit),
      el("td", {}, a.attempt),
      el("td", {}, span(a.startedAt, a.finishedAt)),
      el("td", {}, spent(a.usage)),
      el("td", { class: "doing" }, a.lastMarker || a.detail || ""),
      el("td", {}, a.logPath ? outputButton(key) : null));
    t.append(row, tailRow(key, 7));
  }
  return t;
}

// outputButton shows or folds the output row of key below it.
function outputButton(key) {
  const b = el("button", { type: "button", class: "output", "data-output": key, "aria-expanded": tailOpen.has(key) }, "output");
  b.addEventListener("click", () => {
    if (tailOpen.has(key)) tailOpen.delete(key); else tailOpen.add(key);
    const row = document.querySelector('tr[data-tail-row="' + CSS.escape(key) + '"]');
    if (row) row.hidden = !tailOpen.has(key);
    b.setAttribute("aria-expanded", tailOpen.has(key));
    if (tailOpen.has(key)) loadTail(key);
  });
  return b;
}

function tailRow(key, cols) {
  const row = el("tr", { class: "tail", "data-tail-row": key }, el("td", { colspan: cols }, el("pre", { "data-tail": key }, tailText.get(key) || "")));
  row.hidden = !tailOpen.has(key);
  return row;
}

// tailURL is where the output of key is read: an agent's log by wave
// and id, a backlog worker's by issue.
function tailURL(key) {
  const [kind, id] = key.split("/");
  if (kind === "issue") return api + "backlog/issues/" + encodeURIComponent(id) + "/log?tail=40" + (backlogRun ? "&run=" + encodeURIComponent(backlogRun) : "");
  return api + "runs/" + encodeURIComponent(kind) + "/" + encodeURIComponent(id) + "/log?tail=40";
}

async function loadTail(key) {
  let text;
  try {
    const r = await fetch(tailURL(key), { credentials: "same-origin", cache: "no-store" });
    text = r.ok ? await r.text() : "(" + ((await r.json().catch(() => ({}))).error || r.status) + ")";
  } catch (err) {
    text = "(" + err.message + ")";
  }
  text = safe(text.replace(sequences, ""));
  tailText.set(key, text);
  const pre = document.querySelector('pre[data-tail="' + CSS.escape(key) + '"]');
  if (pre) { pre.textContent = text; pre.scrollTop = pre.scrollHeight; }
}

// renderTails reads again the outputs a person opened.
async function renderTails() {
  await Promise.all([...tailOpen].map(loadTail));
}

let backlogRun = "";

function renderBacklog(bl) {
  const root = document.getElementById("backlog");
  if (!bl) { root.replaceChildren(el("p", { class: "muted" }, "no backlog run in this lane yet")); return; }
  backlogRun = bl.run.id || "";
  const t = bl.tally;
  const head = el("p", {}, "run ", el("code", {}, bl.run.id || ""), " · ", el("span", { class: "state", "data-state": bl.state }, bl.state),
    bl.run.repo ? " · " + bl.run.repo : "", bl.run.waveBranch ? " · " + bl.run.waveBranch : "",
    " · " + dur(bl.elapsedSeconds || 0), spent(bl.usage) ? " · spent " + spent(bl.usage) : "");
  const counts = el("p", { class: "tally", id: "tally" },
    el("span", {}, "merged " + t.merged), el("span", {}, "in flight " + t.inFlight),
    el("span", {}, "blocked " + t.blocked), el("span", {}, "needs input " + t.needsInput), el("span", {}, "planned " + t.planned));
  const tab = el("table", { class: "issues" }, el("tr", {},
    ["issue", "state", "title", "branch", "ahead", "note", ""].map(h => el("th", {}, h))));
  for (const is of bl.issues) {
    const key = "issue/" + is.number;
    tab.append(el("tr", { "data-issue": is.number, "data-state": is.state },
      el("td", {}, "#" + is.number), el("td", { class: "state", "data-state": is.state }, is.state),
      el("td", { class: "title" }, is.title), el("td", { class: "branch" }, is.branch || ""),
      el("td", { class: "ahead" }, is.commitsAhead === null || is.commitsAhead === undefined ? "" : is.commitsAhead),
      el("td", { class: "note" }, issueNote(is)),
      el("td", {}, is.runDir ? outputButton(key) : null)), tailRow(key, 7));
  }
  const paused = (bl.paused || []).map(p => el("p", { class: "paused", "data-executor": p.executor }, p.line));
  const sandbox = bl.sandbox && !bl.sandbox.on ? [el("p", { class: "warn", id: "sandbox-off" },
    "sandbox: off (" + bl.sandbox.why + "): workers can read your home directory and reach any host")] : [];
  const blocked = (bl.blockedHosts || []).map(b => el("p", { class: "blocked-host" },
    "blocked host: " + b.host + " (" + b.issues.map(n => "#" + n).join(" ") + ")"));
  // The merge train: what is being verified, on top of what, what waits.
  const train = bl.train && bl.state !== "finished" ? [el("p", { class: "train", id: "train" }, bl.train.line)] : [];
  root.replaceChildren(head, ...sandbox, ...paused, counts, ...train, ...blocked, tab);
}

// issueNote is the one thing to know about an issue, as the dashboard
// says it: its conflict, its question while one waits, why it failed or
// was parked, its rework, its merge.
function issueNote(is) {
  const waiting = is.state === "needs-input" || is.state === "parked";
  if (is.conflicts > 0 && is.files.length && is.state !== "merged") return "conflicts: " + is.files.join(", ");
  if (is.question && waiting) return "? " + is.question;
  if (is.detail && (is.state === "failed" || is.state === "parked")) return is.detail;
  if (is.reworks > 0 && !["merged", "failed", "parked"].includes(is.state)) return "rework " + is.reworks + ": " + is.feedback;
  if (is.outside && is.outside.length) return "outside its surface: " + is.outside.join(", ");
  if (is.pr) return "PR " + (is.pr.number > 0 ? "#" + is.pr.number : "yes");
  if (is.state === "merged" && is.mergeCommit) return "merged " + is.mergeCommit.slice(0, 7);
  return is.detail || "";
}
