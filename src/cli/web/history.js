/* heapsift web: per-site history (History): the top N sites of profile B (functions, or
 * lines or addresses at the page's granularity, in `heapsift top`'s order), their value in
 * every kept profile of the target as small multiples on one time axis, each point with
 * its 95% interval (the band, and a whisker per point); clicking a site shows it large
 * with its stacks in B. The figures are /api/history's (web_history.c): each point is the
 * site's flat in `heapsift top` of that profile. */
/* ---- History ------------------------------------------------------------------------ */

state.histN = 8;  /* sites shown: the URL's hn */
state.site = "";  /* the site shown large: the URL's site */

/* Ticks at round values for a chart of values up to max: roundTicks' (the page's unit)
 * for bytes; for counts the same 1, 2, 5 steps on plain numbers. */
function histTicks(max, bytes) {
  if (bytes) return roundTicks(max);
  const raw = Math.max(1, max) / 4, p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * p).find((x) => x >= raw);
  let n = Math.ceil(Math.max(1, max) / step);
  if (n * step < max * 1.03) n++;
  const ticks = [];
  for (let k = 0; k <= n; k++) ticks.push(k * step);
  return { top: n * step, ticks };
}

/* A tick's label: in the page's unit (bytes) with as many decimals as the step needs, so a
 * small site's ticks on a page in MB read 0.005MB, 0.01MB, 0.015MB rather than 0.01MB twice. */
function histTickLabel(v, axis, bytes) {
  if (!bytes || v === 0) return String(v);
  let ui = state.unit;
  if (ui === null) {
    ui = 0;
    for (let a = axis.top; a >= 1024 && ui < UNITS.length - 1; a /= 1024) ui++;
  }
  const u = 1024 ** ui, step = (axis.ticks[1] - axis.ticks[0]) / u;
  const digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  return String(parseFloat((v / u).toFixed(digits))) + UNITS[ui];
}

/* One site's chart: its values over the target's profiles (shared time axis t0..t1), the
 * 95% band and whiskers, a round-valued axis. big: the chart of the chosen site, whose
 * points pick profile B when clicked. */
function histChart(j, s, big) {
  const W = big ? Math.max(600, Math.min(1200, $("view-history").clientWidth || 1000)) : 300;
  const H = big ? 300 : 150, L = big ? 70 : 56, R = 10, T = 10, B = big ? 30 : 22;
  const bytes = j.unit === "bytes";
  const fmt = (v) => fmtBytesOr(v, j.unit);
  const times = new Map(j.profiles.map((p) => [p.id, p]));
  const pts = s.points.map((p) => ({ ...p, time: times.get(p.id).time, label: times.get(p.id).label }));
  const axis = histTicks(Math.max(1, ...pts.map((p) => Math.max(p.hi, p.v))), bytes);
  const t0 = j.profiles.length ? j.profiles[0].time : 0;
  const t1 = j.profiles.length ? j.profiles[j.profiles.length - 1].time : 1;
  const X = (t) => L + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (W - L - R);
  const Y = (v) => T + (1 - v / axis.top) * (H - T - B);
  const svg = el("svg:svg", { class: "chart hchart" + (big ? " hbig" : ""), width: W, height: H,
                              viewBox: `0 0 ${W} ${H}`, "data-site": s.name });
  for (const v of axis.ticks) {
    svg.append(el("svg:line", { x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: "#eee" }),
               el("svg:text", { x: L - 5, y: Y(v) + 4, "text-anchor": "end", class: "ytick",
                                "data-v": v }, histTickLabel(v, axis, bytes)));
  }
  const nt = Math.min(pts.length, big ? 6 : 2);
  for (let i = 0; i < nt; i++) {
    const p = pts[Math.round(i * (pts.length - 1) / Math.max(1, nt - 1))];
    const anchor = nt === 1 ? "middle" : i === 0 ? "start" : i === nt - 1 ? "end" : "middle";
    svg.append(el("svg:text", { x: X(p.time), y: H - 8, "text-anchor": anchor }, fmtTime(p.time)));
  }
  if (pts.length > 1) {
    const up = pts.map((p) => X(p.time).toFixed(1) + "," + Y(p.hi).toFixed(1));
    const down = pts.slice().reverse().map((p) => X(p.time).toFixed(1) + "," + Y(p.lo).toFixed(1));
    svg.append(el("svg:polygon", { class: "band", points: up.concat(down).join(" ") }),
               el("svg:polyline", { class: "hline", fill: "none",
                 points: pts.map((p) => X(p.time).toFixed(1) + "," + Y(p.v).toFixed(1)).join(" ") }));
  }
  for (const p of pts) {
    if (p.hi > p.lo) {
      svg.append(el("svg:line", { class: "ci", x1: X(p.time), x2: X(p.time), y1: Y(p.lo), y2: Y(p.hi),
                                  "data-id": p.id, "data-lo": p.lo, "data-hi": p.hi }));
    }
    const c = el("svg:circle", { class: "hpt", cx: X(p.time), cy: Y(p.v), r: big ? 4.5 : 3,
      fill: p.id === state.b ? "var(--heap)" : "#fff", "data-id": p.id, "data-value": p.v,
      "data-lo": p.lo, "data-hi": p.hi, "data-site": s.name });
    c.append(el("svg:title", {}, s.name + " · #" + p.id + " " + p.label + " · " + fmtTime(p.time) +
      " · " + fmt(p.v) + (p.hi > p.lo ? " (95%: " + fmt(p.lo) + ".." + fmt(p.hi) + ")" : "")));
    if (big) c.addEventListener("click", (e) => { e.stopPropagation(); choose(e.shiftKey ? "a" : "b", p.id); });
    svg.append(c);
  }
  return svg;
}

/* The value of site s in profile B (its last point when B is not in the ring). */
function histInB(s) {
  const p = s.points.find((q) => q.id === state.b) || s.points[s.points.length - 1];
  return p ? p.v : 0;
}

function histPick(name) {
  state.site = name;
  render();
}

/* The small multiples: one card per site, its name and value in B above its chart. */
function histGrid(j) {
  const fmt = (v) => fmtBytesOr(v, j.unit);
  return el("div", { id: "hist-grid" }, ...j.sites.map((s, i) => {
    const card = el("div", { class: "hcard", "data-site": s.name, title: "click: " + s.name +
                             " large, with its stacks in B" },
      el("div", { class: "hhead" }, el("span", { class: "hrank" }, (i + 1) + "."),
         el("a", { class: "hname", href: "#" }, s.name),
         el("span", { class: "hval" }, fmt(histInB(s)))),
      histChart(j, s, false));
    card.addEventListener("click", (e) => { e.preventDefault(); histPick(s.name); });
    return card;
  }));
}

/* The chosen site: its chart large, then its stacks in B (the stacks whose leaf it is). */
function histDetail(j) {
  const s = j.site, fmt = (v) => fmtBytesOr(v, j.unit);
  const parts = [histChart(j, s, true)];
  if (!s.in_b) {
    parts.push(el("div", { class: "note", id: "hist-nosite" }, s.name + " has no " + j.sample_type +
                  " of its own in profile B #" + j.id + " (at this granularity and these filters)."));
    return parts;
  }
  const rows = s.stacks.map((x) => el("tr", { "data-value": x.v, "data-frames": x.frames.join(";") },
    el("td", {}, fmt(x.v)), el("td", {}, x.hi > x.lo ? fmt(x.lo) + ".." + fmt(x.hi) : "exact"),
    el("td", { class: "name" }, x.frames.join(" < "))));
  parts.push(el("h3", {}, "Stacks of " + s.name + " in profile B #" + j.id + " ",
                el("span", { class: "summary" }, "(" + s.nstacks + " stack" + (s.nstacks === 1 ? "" : "s") +
                   (s.nstacks > s.stacks.length ? ", the largest " + s.stacks.length : "") + ", leaf first)")),
             el("table", { class: "rep", id: "hist-stacks" },
                el("thead", {}, el("tr", {}, el("th", {}, j.sample_type), el("th", {}, "95% interval"),
                                   el("th", { class: "name" }, "stack (leaf first)"))),
                el("tbody", {}, ...rows)));
  return parts;
}

async function renderHistory() {
  $("hist-n").value = String(state.histN);
  $("hist-back").hidden = $("hist-flame").hidden = !state.site;
  const box = $("hist-box"), sum = $("hist-summary");
  if (state.b === null) {
    sum.textContent = "No profile yet for this target.";
    box.replaceChildren();
    return;
  }
  const extra = { id: state.b, n: state.histN };
  if (state.site) extra.site = state.site;
  const j = await api("history", viewParams(extra));
  const how = j.exact ? "exact (recorded at rate 1)" : "band and whiskers: 95% interval of each sampled estimate";
  if (state.site) {
    sum.replaceChildren(el("b", { id: "hist-site" }, state.site), " · " + j.sample_type + " in each of the " +
                        j.profiles.length + " kept profiles · " + how + " · click a point: profile B");
    box.replaceChildren(...histDetail(j));
    return;
  }
  sum.textContent = "The top " + j.sites.length + " of " + j.nsites + " sites of profile B #" + j.id +
    " (" + j.sample_type + ", as heapsift top ranks them) in each of the " + j.profiles.length +
    " kept profiles · " + how + " · click a site: its history and stacks";
  box.replaceChildren(j.sites.length ? histGrid(j) : el("div", { class: "note" }, "No site."));
}

function initHistory() {
  $("hist-n").addEventListener("change", () => { state.histN = +$("hist-n").value; render(); });
  $("hist-back").addEventListener("click", () => histPick(""));
  $("hist-flame").addEventListener("click", () => {
    /* The bottom-up flame graph zoomed on the site: its callers, i.e. its stacks. */
    state.invert = true;
    state.zoom = [state.site];
    $("flame-search").value = "^" + escapeRe(state.site) + "$";
    setTab("flame");
  });
}
