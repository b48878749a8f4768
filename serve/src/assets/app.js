// The live page: polls /api/state and draws it with DOM nodes (every text from the run is
// set as text, never as markup); figures (SVG from the report's figure code) are fetched
// from /api/figures when the snapshot changes and shown as images.
"use strict";

const POLL_MS = 1000;
let figuresVersion = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function replace(id, ...children) {
  const node = document.getElementById(id);
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function show(id, visible) {
  document.getElementById(id).hidden = !visible;
}

function pct(v) {
  return v === null || v === undefined ? "–" : (100 * v).toFixed(1) + "%";
}

// "trajectory" → "trajectories", "dialogue_run" → "dialogue runs".
function plural(unit) {
  const words = String(unit).replace(/_/g, " ");
  return words.endsWith("y") ? words.slice(0, -1) + "ies" : words + "s";
}

function duration(s) {
  if (s === null || s === undefined || !isFinite(s)) return "–";
  s = Math.round(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return (h ? h + "h " : "") + (h || m ? m + "m " : "") + sec + "s";
}

function list(pairs) {
  const out = [];
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === "") continue;
    out.push(el("dt", {}, k), el("dd", {}, Array.isArray(v) ? v.join(", ") : v));
  }
  return out;
}

function table(header, rows, textColumns) {
  const head = el("tr", {}, ...header.map((h, i) => el("th", { class: i < textColumns ? "text" : "" }, h)));
  const body = rows.map((r) => el("tr", {}, ...r.map((c, i) => el("td", { class: i < textColumns ? "text" : "" }, c))));
  return el("table", {}, el("thead", {}, head), el("tbody", {}, ...body));
}

function drawIdentity(s) {
  const id = s.identity || {};
  document.getElementById("title").textContent = "choice2seq — " + (id.run || "run");
  replace("identity-list", ...list([
    ["kind", s.kind + (s.mode === "view" ? " (run directories)" : " (live)")],
    ["config", id.config],
    ["run directory", id.run_dirs],
    ["model", id.models],
    ["engine", id.engine],
    ["arms", id.arms],
  ]));
  const state = document.getElementById("state");
  state.textContent = s.state;
  state.className = "state " + s.state;
}

function drawProgress(s) {
  const p = s.progress || {};
  const fill = document.getElementById("bar-fill");
  let text;
  if (s.mode === "view") {
    fill.style.width = "100%";
    text = (p.outcomes || 0) + " outcomes, " + (p.trajectories || 0) + " trajectories read in " +
      (p.read_seconds || 0).toFixed(1) + " s";
  } else {
    const total = p.items_total;
    const frac = total ? Math.min(1, p.items_done / total) : (s.state === "running" ? 0 : 1);
    fill.style.width = (100 * frac).toFixed(1) + "%";
    text = p.items_done + (total ? " / " + total : "") + " items · " + p.completed + " " + plural(p.unit) +
      " · " + p.requests + " requests · " +
      (p.rate_per_s === null ? "–" : p.rate_per_s.toFixed(2)) + " items/s · ETA " +
      (s.state === "running" ? duration(p.eta_s) : "–") + " · elapsed " + duration(p.elapsed_s);
  }
  replace("progress-text", text);
}

function drawHeadline(s) {
  const snap = s.snapshot || {};
  replace("snapshot-label", snap.number === null || snap.number === undefined ? "(no snapshot yet)" :
    "(snapshot " + snap.number + (snap.age_s !== undefined && snap.age_s !== null ? ", " + duration(snap.age_s) + " ago" : "") + ")");
  const tiles = (s.headline || []).map((h) => {
    const key = h.model + " · " + h.domain + " · " + h.comparison;
    const metric = (name, label) => {
      const m = h[name];
      const value = m ? m.value : null;
      const ci = m && m.ci_low !== null && m.ci_high !== null ? " [" + pct(m.ci_low) + ", " + pct(m.ci_high) + "]" : "";
      const count = m && m.numerator !== null && m.denominator !== null ? " (" + m.numerator + "/" + m.denominator + ")" : "";
      return el("div", { class: "metric " + name, "data-metric": name, "data-key": key,
        "data-value": value === null ? "" : String(value) },
        el("span", { class: name === "scr" ? "big" : "" }, label + " " + pct(value)),
        el("span", { class: "ci" }, ci + count));
    };
    return el("div", { class: "tile" }, el("div", { class: "key" }, key),
      metric("scr", "SCR"), metric("native_em", "Native EM"), metric("serial_em", "Serial EM"));
  });
  replace("headline", ...tiles);
  show("headline-section", tiles.length > 0 || s.kind === "items");
  const err = document.getElementById("snapshot-error");
  err.hidden = !snap.error;
  err.textContent = snap.error || "";
}

function drawPaired(s) {
  const t = s.paired;
  show("paired-section", !!t);
  if (!t) return;
  replace("paired", table(t.header, t.rows, t.text_columns));
  replace("paired-notes", ...t.notes.map((n) => el("li", {}, n)));
  const live = s.live_counts || [];
  show("live-section", live.length > 0);
  if (live.length) {
    replace("live", table(["Model", "Domain", "Comparison", "n", "Both", "Native only", "Serial only", "Neither", "SCR"],
      live.map((c) => [c.model, c.domain, c.comparison, c.n, c.both, c.native_only, c.serial_only, c.neither, pct(c.scr)]), 3));
  }
}

function drawEngine(s) {
  const e = s.engine;
  show("engine-section", !!e);
  if (!e) return;
  const w = s.writes || {};
  const parts = Object.entries(w.parts || {}).map(([d, c]) => d + " " + c.parts + " (" + c.rows + " rows)");
  replace("engine", ...list([
    ["requests", e.answered + " answered · " + e.cached + " cached · " + e.failed + " failed · " + e.in_flight + " in flight"],
    ["prompt tokens", e.prompt_tokens + " (" + e.computed_tokens + " computed)"],
    ["generated tokens", e.generated_tokens],
    ["parts closed", parts.length ? parts.join(" · ") : "none yet"],
    ["outputs", w.failed ? "FAILED: " + (w.error || "") : w.blocked ? "blocked (retrying; feeding paused)" : "writing"],
  ].concat(s.outages ? [["server", serverState(s.outages)]] : [])));
  const k = s.kafka || [];
  replace("kafka", k.length ? table(["Topic", "Partition", "Next offset", "Committed", "High watermark", "Lag"],
    k.map((p) => [p.topic, p.partition, p.next_offset, p.committed, p.high_watermark, p.lag]), 1) : null);
}

// A remote server's state: reachable, or an outage (feeding paused) and the past ones.
function serverState(o) {
  const list = o.list || [];
  const past = list.filter((x) => x.recovered);
  const lost = past.reduce((t, x) => t + x.seconds, 0);
  const history = past.length ? " · " + past.length + " past outage(s), " + lost.toFixed(1) + " s" : "";
  if (o.active) {
    const now = list[list.length - 1];
    return "UNREACHABLE for " + now.seconds.toFixed(0) + " s of at most " + o.max_outage_seconds.toFixed(0) +
      " (retrying; feeding paused): " + now.cause + history;
  }
  return "reachable" + history;
}

function drawProblems(s) {
  const errs = s.errors || [];
  replace("errors", errs.length ? table(["Engine error", "Count"], errs.map((e) => [e.message, e.count]), 1) :
    el("p", { class: "muted" }, "No engine errors."));
  const r = s.rejects || { count: 0, recent: [] };
  const recent = r.recent || [];
  replace("rejects", el("p", { class: "muted" }, r.count + " rejected records" + (recent.length ? " (latest first):" : ".")),
    recent.length ? table(["Source", "Location", "Item", "Reason"], recent.map((x) => [x.source, x.location, x.item_id || "–", x.reason]), 4) : null);
}

function drawSummary(s) {
  show("summary-section", !!s.summary_text);
  if (s.summary_text) document.getElementById("summary").textContent = s.summary_text;
}

async function drawFigures(version) {
  const res = await fetch("/api/figures", { cache: "no-store" });
  if (!res.ok) return;
  const figs = await res.json();
  figuresVersion = version;
  show("figures-section", figs.length > 0);
  replace("figures", ...figs.map((f) => el("figure", {},
    el("img", { alt: f.title, src: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(f.svg) }))));
}

async function poll() {
  try {
    const res = await fetch("/api/state", { cache: "no-store" });
    if (!res.ok) throw new Error("HTTP " + res.status);
    const s = await res.json();
    drawIdentity(s);
    drawProgress(s);
    drawHeadline(s);
    drawPaired(s);
    drawSummary(s);
    drawEngine(s);
    drawProblems(s);
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    if (s.figures_version !== null && s.figures_version !== undefined && s.figures_version !== figuresVersion) {
      await drawFigures(s.figures_version);
    }
  } catch (e) {
    const state = document.getElementById("state");
    state.textContent = "disconnected";
    state.className = "state failed";
  }
  setTimeout(poll, POLL_MS);
}

// "Open a request": /request/ID, each path segment of the id encoded.
document.getElementById("request-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const id = document.getElementById("request-id").value.trim();
  if (id) window.location.href = "/request/" + id.split("/").map(encodeURIComponent).join("/");
});

poll();
