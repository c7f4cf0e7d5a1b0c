/* heapsift web: the page's core, shared by every view: building elements, the one byte unit,
 * the state and its URL fragment, the JSON API, the target and profile selectors. */
const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

/* el("td", {class: "x"}, "text", child...): elements built with text nodes only. */
function el(tag, attrs, ...kids) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4))
                                   : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const k of kids) {
    if (k !== undefined && k !== null) e.append(k instanceof Node ? k : String(k));
  }
  return e;
}

/* One unit for every byte figure of the page (pprof's names, powers of 1024): the unit of
 * the largest live heap or RSS among the target's kept profiles (pageUnit), so that the
 * Top table, the flame graph, the call graph, the source lines and the series all read in
 * it; the views are asked for it (unit=), and a figure reads as pprof's ScaledLabel
 * ("%.2f" without a trailing ".00"), as `heapsift top --unit UNIT` prints it. */
const UNITS = ["B", "kB", "MB", "GB", "TB", "PB"];

function pageUnit(profiles) {
  let max = 0;
  for (const p of profiles) max = Math.max(max, Math.abs(p.inuse || 0), Math.abs(p.rss || 0));
  if (!max) return null;
  let i = 0;
  while (max >= 1024 && i < UNITS.length - 1) { max /= 1024; i++; }
  return i;
}

/* v in unit i, or (i null) in its own unit, as pprof's ScaledLabel writes it. */
function fmtIn(v, i) {
  if (i === null) {
    i = 0;
    for (let a = Math.abs(v); a >= 1024 && i < UNITS.length - 1; a /= 1024) i++;
  }
  let s = (v / 1024 ** i).toFixed(2);
  if (s.endsWith(".00")) s = s.slice(0, -3);
  return s === "0" || s === "-0" ? "0" : s + UNITS[i];
}

/* v in the page's unit; a non-zero v that would read 0 in it (a tiny frame) in its own
 * (no profile to choose the page's unit from yet: its own too). */
function fmtBytes(v) {
  if (v === null || v === undefined) return "n/a";
  const s = fmtIn(v, state.unit);
  return s === "0" && v !== 0 ? fmtIn(v, null) : s;
}

function fmtTime(ms) {
  const d = new Date(ms);
  return d.toLocaleTimeString([], { hour12: false });
}

const state = {
  targets: [], interval: 5, target: 0, profiles: [], a: null, b: null, followB: true,
  sample: "", gran: "functions", tab: "diagnose", diffMode: "table", zoom: null,
  dzoom: null, unit: null, invert: false, refine: [], pinWanted: false,
};

/* The JSON answer to /api/PATH?PARAMS (init: fetch's, for a POST), or an Error with the
 * server's message (the status when an error has no JSON). */
async function apiFetch(path, params, init) {
  const q = new URLSearchParams(params || {});
  const r = await fetch("/api/" + path + (q.toString() ? "?" + q : ""), init);
  let j = {};
  try { j = await r.json(); } catch (e) { if (r.ok) throw e; }
  if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
  return j;
}

async function api(path, params) {
  return apiFetch(path, params);
}

/* POST /api/PATH?PARAMS, with body (a file) or none. */
async function apiPost(path, params, body) {
  return apiFetch(path, params, { method: "POST", body });
}

function viewParams(extra) {
  const p = { target: state.target, ...extra };
  if (state.sample) p.sample = state.sample;
  Object.assign(p, refineParams(state.refine));
  if (state.gran !== "functions") p.granularity = state.gran;
  if (state.unit !== null) p.unit = UNITS[state.unit];
  return p;
}

/* The page's state in the URL's fragment, "#TAB&key=value...", so a view can be reloaded
 * and shared: target, profiles A and B (B only when chosen, not following the newest),
 * sample type, the refinements (refine.js), granularity, whether A is pinned, the Graph's
 * "colour by change", the Source and Peek regexes, and the History's site count and chosen
 * site. */
function stateHash() {
  const q = new URLSearchParams();
  if (state.target) q.set("target", state.target);
  if (state.a !== null) q.set("a", state.a);
  if (state.b !== null && !state.followB) q.set("b", state.b);
  if (state.sample) q.set("sample", state.sample);
  refineToQuery(q);
  if (state.gran !== "functions") q.set("granularity", state.gran);
  if ($("graph-diff").checked) q.set("graphdiff", "1");
  if ($("source-fn").value.trim()) q.set("fn", $("source-fn").value.trim());
  if ($("peek-fn").value.trim()) q.set("pfn", $("peek-fn").value.trim());
  if (state.invert) q.set("flame", "callers");
  if (state.histN !== 8) q.set("hn", state.histN);
  if (state.site) q.set("site", state.site);
  const rest = q.toString();
  return "#" + state.tab + (rest ? "&" + rest : "");
}

function saveState() {
  const h = stateHash();
  if (location.hash !== h) history.replaceState(null, "", h);
}

/* Restores what stateHash wrote; returns the tab it names (or ""). */
function loadState() {
  const h = location.hash.slice(1), amp = h.indexOf("&");
  const q = new URLSearchParams(amp < 0 ? "" : h.slice(amp + 1));
  if (q.has("target")) state.target = +q.get("target");
  if (q.has("a")) state.a = +q.get("a");
  if (q.has("b")) { state.b = +q.get("b"); state.followB = false; }
  state.sample = q.get("sample") || "";
  refineFromQuery(q);
  state.gran = q.get("granularity") || "functions";
  $("gran").value = state.gran;
  $("graph-diff").checked = q.get("graphdiff") === "1";
  $("source-fn").value = q.get("fn") || "";
  $("peek-fn").value = q.get("pfn") || "";
  state.invert = q.get("flame") === "callers";
  state.histN = +q.get("hn") || 8;
  state.site = q.get("site") || "";
  return amp < 0 ? h : h.slice(0, amp);
}

function showError(msg) {
  const e = $("err");
  e.textContent = msg || "";
  e.hidden = !msg;
}

/* ---- targets, profiles and the selectors ------------------------------------------ */

function profName(p) {
  return "#" + p.id + "  " + p.label + (p.inuse !== null ? "  (" + fmtBytes(p.inuse) + ")" : "") +
         (p.pinned ? "  · pinned" : "");
}

function fillSelect(sel, items, value) {
  const keep = sel.value;
  sel.replaceChildren(...items.map(([v, t]) => el("option", { value: v }, t)));
  sel.value = value !== undefined ? value : keep;
}

function renderStatus() {
  const t = state.targets.find((x) => x.index === state.target);
  $("target-close").hidden = !t || t.kind !== "upload";
  const s = $("status");
  if (!t) { s.textContent = "no target"; return; }
  document.title = "heapsift web · " + t.spec;
  const parts = [t.spec + " · " + t.profiles + " profile" + (t.profiles === 1 ? "" : "s") +
                 " kept" + (t.pins ? " (" + t.pins + " pinned)" : "") + " · " +
                 (t.kind === "upload" ? "uploaded" : "polled every " + state.interval + " s")];
  s.replaceChildren(parts[0]);
  if (t.last_ok) s.append(el("br"), "last profile " + fmtTime(t.last_ok));
  const banner = $("target-banner");
  banner.hidden = !t.error;
  banner.replaceChildren();
  if (t.error) {
    banner.append(el("b", {}, "This target is failing: "),
                  el("span", { id: "target-error" }, t.error),
                  " (since " + fmtTime(t.error_time) + "; " + t.failures + " failed poll" +
                  (t.failures === 1 ? "" : "s") + ", retried every " + state.interval + " s)");
  }
}

async function loadTargets() {
  const j = await api("targets");
  state.targets = j.targets;
  state.interval = j.interval;
  fillSelect($("target"), j.targets.map((t) => [t.index, t.spec + (t.kind === "upload" ? " (uploaded)" : "") +
                                                   (t.error ? "  ⚠" : "")]),
             state.target);
  renderStatus();
}

/* Picks A and B after the ring changed: B follows the newest unless the user chose one. */
function pickProfiles() {
  const ids = state.profiles.map((p) => p.id);
  const newest = ids.length ? ids[ids.length - 1] : null;
  if (state.followB || !ids.includes(state.b)) { state.b = newest; state.followB = true; }
  if (!ids.includes(state.a)) state.a = ids.length ? ids[0] : null;
}

async function loadProfiles() {
  const target = state.target;
  const j = await api("profiles", { target });
  if (state.target !== target) return false; // switched meanwhile: not this target's
  const before = state.profiles.map((p) => p.id).join(",");
  state.profiles = j.profiles;
  state.unit = pageUnit(j.profiles);
  pickProfiles();
  const opts = j.profiles.map((p) => [p.id, profName(p)]).reverse();
  fillSelect($("profA"), opts, state.a === null ? "" : String(state.a));
  fillSelect($("profB"), opts, state.b === null ? "" : String(state.b));
  const types = j.profiles.length ? j.profiles[j.profiles.length - 1].sample_types : [];
  const dflt = j.profiles.length ? j.profiles[j.profiles.length - 1].default_sample_type : "";
  fillSelect($("sample"), types.map((t) => [t, t + (t === dflt ? " (default)" : "")]),
             state.sample || dflt || types[types.length - 1] || "");
  state.sample = $("sample").value;
  return before !== state.profiles.map((p) => p.id).join(",");
}

