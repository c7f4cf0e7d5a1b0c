/* heapsift web: live heap (with its 95% interval band) and RSS over time, why they differ,
 * with `heapsift stats`' table (Series), and the leak suspects. */
/* ---- Series ------------------------------------------------------------------------- */

/* The series' value axis: ticks at round values of the page's unit (1, 2 or 5 times a
 * power of ten: 0, 20MB, 40MB...), about four of them, the top one above max (with room
 * for the points' circles). Returns { top, ticks } in bytes. */
function roundTicks(max) {
  let ui = state.unit;
  if (ui === null) {
    ui = 0;
    for (let a = max; a >= 1024 && ui < UNITS.length - 1; a /= 1024) ui++;
  }
  const u = 1024 ** ui, m = max / u, raw = m / 4, p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * p).find((x) => x >= raw);
  let n = Math.ceil(m / step);
  if (n * step < m * 1.03) n++;
  const ticks = [];
  for (let k = 0; k <= n; k++) ticks.push(Math.round(k * step * u));
  return { top: n * step * u, ticks };
}

async function renderSeries() {
  const j = await api("series", { target: state.target });
  const pts = j.points;
  const box = $("series-box");
  const W = Math.max(600, Math.min(1200, box.clientWidth || 1000)), H = 300;
  const L = 70, R = 16, T = 14, B = 34;
  const vals = pts.flatMap((p) => [p.inuse, p.inuse_hi, p.rss]).filter((v) => v !== null && v !== undefined);
  const hasRss = pts.some((p) => p.rss !== null);
  const axis = roundTicks(Math.max(1, ...vals)), ymax = axis.top;
  const t0 = pts.length ? pts[0].time : 0, t1 = pts.length ? pts[pts.length - 1].time : 1;
  const X = (t) => L + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (W - L - R);
  const Y = (v) => T + (1 - v / ymax) * (H - T - B);
  const svg = el("svg:svg", { class: "chart", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  for (const v of axis.ticks) {
    svg.append(el("svg:line", { x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: "#eee" }),
               el("svg:text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end", class: "ytick",
                                "data-v": v }, fmtBytes(v)));
  }
  const ticks = Math.min(pts.length, 6);
  for (let i = 0; i < ticks; i++) {
    const p = pts[Math.round(i * (pts.length - 1) / Math.max(1, ticks - 1))];
    const anchor = ticks === 1 ? "middle" : i === 0 ? "start" : i === ticks - 1 ? "end" : "middle";
    svg.append(el("svg:text", { x: X(p.time), y: H - 12, "text-anchor": anchor }, fmtTime(p.time)));
  }
  /* The live heap's 95% interval (each point's sampled estimate; none when exact). */
  const band = pts.filter((p) => p.inuse !== null && p.inuse_lo !== null);
  if (band.length > 1) {
    const up = band.map((p) => X(p.time).toFixed(1) + "," + Y(p.inuse_hi).toFixed(1));
    const down = band.slice().reverse().map((p) => X(p.time).toFixed(1) + "," + Y(p.inuse_lo).toFixed(1));
    svg.append(el("svg:polygon", { class: "band-inuse", points: up.concat(down).join(" ") }));
  }
  for (const [key, color] of [["inuse", "var(--heap)"], ["rss", "var(--rss)"]]) {
    const ps = pts.filter((p) => p[key] !== null);
    if (ps.length > 1) {
      svg.append(el("svg:polyline", { fill: "none", stroke: color, "stroke-width": 2,
        points: ps.map((p) => X(p.time).toFixed(1) + "," + Y(p[key]).toFixed(1)).join(" ") }));
    }
    for (const p of ps) {
      const c = el("svg:circle", { cx: X(p.time), cy: Y(p[key]), r: p.id === state.b ? 6 : 4,
        fill: p.id === state.b || p.id === state.a ? color : "#fff", stroke: color,
        "stroke-width": 2, class: "pt-" + key, "data-id": p.id, "data-value": p[key],
        "data-lo": key === "inuse" ? p.inuse_lo : null, "data-hi": key === "inuse" ? p.inuse_hi : null });
      const ci = key === "inuse" && p.inuse_hi > p.inuse_lo
        ? " (95%: " + fmtBytes(p.inuse_lo) + ".." + fmtBytes(p.inuse_hi) + ")" : "";
      c.append(el("svg:title", {}, "#" + p.id + " " + p.label + " · " + fmtTime(p.time) + " · " +
                                   (key === "inuse" ? "live heap " : "RSS ") + fmtBytes(p[key]) + ci));
      c.addEventListener("click", (e) => choose(e.shiftKey ? "a" : "b", p.id));
      svg.append(c);
    }
  }
  box.replaceChildren(svg);
  const last = pts[pts.length - 1];
  $("series-note").textContent = !pts.length ? "No profile yet." :
    "Latest (#" + last.id + "): live heap " + fmtBytes(last.inuse) + ", RSS " +
    (last.rss !== null ? fmtBytes(last.rss) + " (from the " + (last.rss_from === "stats" ?
      "endpoint's /debug/heapsift/stats" : "profile's accounting") + ")" : "not available") +
    (hasRss ? "" : " · RSS is not available for this target: its profiles carry no accounting " +
                   "and it serves no /debug/heapsift/stats");
  await renderAccounting();
}

/* `heapsift stats` of B as its table. hs_report_stats prints a row as "%*s%-*s %12s  NOTE"
 * (the label indented, in 44 columns; the figure right-aligned in 12); its other lines
 * (the header, a note under a row, the exact counts, a leak check's summary) span the
 * table. */
function statsRows(text) {
  const lines = text.replace(/\n+$/, "").split("\n");
  const head = lines.shift() || "";
  const rows = [];
  for (const l of lines) {
    const fig = l.slice(45, 57).trim();
    if (l.length >= 57 && l[44] === " " && /^-?[0-9.]+( ?[kMGT]?B)?$/.test(fig)) {
      const label = l.slice(0, 44).trimEnd();
      rows.push({ indent: label.length - label.trimStart().length, label: label.trim(), fig,
                  note: l.slice(57).trim() });
    } else if (l.trim()) {
      rows.push({ line: l.trim() });
    }
  }
  return { head, rows };
}

async function renderAccounting() {
  const t = $("acct"), head = $("acct-head");
  if (state.b === null) { t.hidden = true; head.textContent = "No profile yet."; return; }
  const j = await api("stats", { target: state.target, id: state.b });
  if (!j.available) {
    t.hidden = true;
    head.textContent = "Profile B #" + j.id + " carries no accounting: heapsift writes it in " +
      "each profile it dumps (a Go program's or another profiler's profiles have none).";
    return;
  }
  const { head: h, rows } = statsRows(j.text);
  head.textContent = h;
  t.tBodies[0].replaceChildren(...rows.map((r) => r.line !== undefined
    ? el("tr", { class: "line" }, el("td", { colspan: 3 }, r.line))
    : el("tr", { class: "row" }, el("td", { class: "name" }, " ".repeat(r.indent) + r.label),
         el("td", { class: "fig" }, r.fig), el("td", { class: "note" }, r.note))));
  t.hidden = false;
}

/* ---- Suspects ----------------------------------------------------------------------- */

function sparkline(values, color) {
  const W = 90, H = 22, max = Math.max(1, ...values), min = Math.min(0, ...values);
  const X = (i) => values.length > 1 ? 2 + i * (W - 4) / (values.length - 1) : W / 2;
  const Y = (v) => H - 2 - (v - min) / (max - min || 1) * (H - 4);
  return el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}` },
    el("svg:polyline", { fill: "none", stroke: color, "stroke-width": 1.5,
      points: values.map((v, i) => X(i).toFixed(1) + "," + Y(v).toFixed(1)).join(" ") }));
}

async function renderSuspects() {
  const j = await api("suspects", viewParams({}));
  const box = $("suspects");
  if (!j.available) {
    box.replaceChildren(el("div", { class: "note pending", id: "suspects-pending" },
                           el("b", {}, "Leak suspects: pending. "), j.reason));
    return;
  }
  if (j.reason) {
    box.replaceChildren(el("div", { class: "note" }, "Leak suspects " + j.reason +
                           " (this target has " + j.profiles + ")."));
    return;
  }
  const head = el("p", { class: "summary", id: "suspects-summary" },
    "Over the " + j.profiles + " kept profiles (" +
    (j.timed ? j.span.toFixed(1) + " s" : "untimed") + ") · " + j.sample_type + " · ",
    el("b", {}, j.growing + " of " + j.stacks + " stacks grow beyond sampling noise"),
    ...(j.reachable_labels ? [" · ", el("b", { id: "suspects-unreachable" }, j.unreachable +
        " hold objects no pointer reaches (reachable=no)")] : []),
    " · as `heapsift suspects` ranks them: " +
    (j.reachable_labels ? "unreachable first, then " : "") + "growing first, then by slope");
  const rows = j.suspects.map((x) => el("tr", { class: x.verdict === "growing" || x.unreachable > 0
                                                         ? "grew" : "noise",
                                                "data-name": x.stack[0] || "",
                                                "data-unreachable": x.unreachable > 0 ? "1" : "0" },
    el("td", { class: "chg" }, x.verdict),
    ...(j.reachable_labels ? [el("td", { class: "unreach" },
                                 x.unreachable > 0 ? "lost " + x.unreachable_label : "-")] : []),
    el("td", {}, x.slope_label + (j.timed ? "/s" : "/prof")),
    el("td", {}, (x.growth > 0 ? "+" : "") + x.growth_label), el("td", {}, "±" + x.noise_label),
    el("td", {}, x.last_label), el("td", {}, x.r2 === null ? "-" : x.r2.toFixed(2)),
    el("td", {}, x.rises + "/" + (j.profiles - 1)),
    el("td", {}, sparkline(x.values, x.verdict === "growing" ? "#c0392b" : "#8a8a8a")),
    el("td", { class: "name" }, x.stack.join(" < "))));
  const table = el("table", { class: "rep", id: "suspects-table" },
    el("thead", {}, el("tr", {}, ...["verdict"].concat(j.reachable_labels ? ["unreachable"] : [],
                                     ["slope", "growth", "noise", "last", "R²", "rises", "trend"])
                                     .map((h) => el("th", {}, h)),
                       el("th", { class: "name" }, "stack (leaf first)"))),
    el("tbody", {}, ...rows));
  const mixed = j.processes > 1 ? [el("div", { class: "note", id: "suspects-processes" },
    "These profiles come from " + j.processes + " processes (a restarted target, or the dumps " +
    "of several runs): the slopes compare runs, not growth within one.")] : [];
  box.replaceChildren(head, ...mixed,
                      rows.length ? table : el("div", { class: "note" }, "No stack grew."));
}

