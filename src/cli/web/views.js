/* heapsift web: the Top table, the flame graph (top-down or bottom-up) and the Diff
 * (table or differential flame graph). */
/* ---- Top ---------------------------------------------------------------------------- */

function bar(frac, color) {
  const w = Math.max(0, Math.min(1, Math.abs(frac))) * 100;
  return el("div", { class: "barbox" }, el("i", { style: `left:0;width:${w}%;background:${color}` }));
}

async function renderTop() {
  const body = $("top-table").tBodies[0];
  if (state.b === null) {
    $("top-summary").textContent = "No profile yet for this target.";
    body.replaceChildren();
    return;
  }
  const j = await api("top", viewParams({ id: state.b }));
  const s = $("top-summary");
  s.replaceChildren("Profile B #" + j.id + " · " + j.sample_type + " · total ",
                    el("b", {}, j.total_label),
                    " · showing " + j.shown_label + " (" + j.shown_pct + ") in " + j.rows.length +
                    " of " + j.nodes + " nodes" +
                    (j.dropped ? "; dropped " + j.dropped + " (cum <= " + j.dropped_under + ")" : "") +
                    " · ",
                    el("a", { id: "download", download: "profile-" + j.id + ".pb.gz",
                              href: "/api/raw?" + new URLSearchParams({ target: state.target, id: j.id }) },
                       "download (pprof)"));
  const max = Math.max(1, ...j.rows.map((r) => Math.abs(r.cum)));
  body.replaceChildren(...j.rows.map((r) => el("tr", { "data-name": r.name, "data-fn": r.fn },
    el("td", { class: "flat" }, r.flat_label), el("td", {}, r.flat_pct),
    el("td", {}, r.sum_pct), el("td", { class: "cum" }, r.cum_label), el("td", {}, r.cum_pct),
    el("td", { class: "bar" }, bar(r.cum / max, "#9db4e0")),
    el("td", { class: "name", title: (r.file ? r.file + " · " : "") + "click: show in the flame graph · right-click: focus, ignore, hide" },
       r.name))));
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/* ---- Flame graph ------------------------------------------------------------------ */

function hue(name) {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  return `hsl(${14 + (h % 36)}, ${70 + ((h >> 8) % 20)}%, ${58 + ((h >> 16) % 14)}%)`;
}

/* Red grew, blue shrank, only for changes beyond sampling noise (n.k, the server's verdict,
 * as `heapsift diff` judges); grey within noise. */
function diffColor(n, maxd) {
  const d = n.v - n.b;
  const r = maxd ? Math.min(1, Math.abs(d) / maxd) : 0;
  const c = Math.round(238 - 170 * r);
  if (n.k !== "grew" && n.k !== "shrank") return "rgb(238,238,238)";
  return d > 0 ? `rgb(250,${c},${c})` : `rgb(${c},${c},250)`;
}

/* Draws the tree into box: root on top, children left to right by name, width by value.
 * zoomPath is the list of names from the root to the zoomed frame. */
function drawFlame(box, details, data, zoomPath, onZoom, diff) {
  const W = Math.max(600, box.clientWidth || 1100), H = 18;
  let node = data.root;
  const chain = [node];
  for (const name of zoomPath || []) {
    const next = node.c.find((c) => c.n === name);
    if (!next) break;
    node = next;
    chain.push(node);
  }
  const total = data.root.v || 1, scale = W / Math.max(1, node.v);
  let maxd = 0;
  (function walk(n) {
    if (n.k === "grew" || n.k === "shrank") maxd = Math.max(maxd, Math.abs(n.v - n.b));
    n.c.forEach(walk);
  })(data.root);
  const frames = [];
  chain.forEach((n, i) => frames.push({ n, x: 0, w: W, d: i, path: chain.slice(1, i + 1), anc: i < chain.length - 1 }));
  let depth = chain.length;
  (function walk(n, x, d, path) {
    let cx = x;
    for (const c of n.c) {
      const w = c.v * scale;
      if (w >= 0.4) {
        const p = path.concat(c.n);
        frames.push({ n: c, x: cx, w, d, path: p });
        depth = Math.max(depth, d + 1);
        walk(c, cx, d + 1, p);
      }
      cx += w;
    }
  })(node, 0, chain.length, chain.slice(1).map((n) => n.n));
  const svg = el("svg:svg", { class: "flame", width: W, height: depth * H + 2,
                              viewBox: `0 0 ${W} ${depth * H + 2}` });
  const texts = [];
  for (const [i, f] of frames.entries()) {
    const g = el("svg:g", { class: "fr", "data-name": f.n.n, "data-i": i });
    const fill = diff ? diffColor(f.n, maxd) : f.d === 0 ? "#c9c9c2" : hue(f.n.n);
    g.append(el("svg:rect", { x: f.x.toFixed(2), y: f.d * H, width: Math.max(0.5, f.w).toFixed(2),
                              height: H - 1, rx: 2, fill, opacity: f.anc ? 0.6 : 1 }));
    const chars = Math.floor((f.w - 6) / 6.6);
    if (chars >= 3) {
      const t = f.n.n.length <= chars ? f.n.n : f.n.n.slice(0, chars - 1) + "…";
      g.append(el("svg:text", { x: (f.x + 3).toFixed(2), y: f.d * H + 12.5 }, t));
    }
    const pct = (100 * f.n.v / total).toFixed(2) + "%";
    const delta = diff ? "  Δ " + (f.n.v - f.n.b >= 0 ? "+" : "") + fmtBytesOr(f.n.v - f.n.b, data.unit) +
                         " " + f.n.k : "";
    const text = f.n.n + " — " + fmtBytesOr(f.n.v, data.unit) + " (" + pct + ")" +
                 (f.n.s ? ", self " + fmtBytesOr(f.n.s, data.unit) : "") + delta;
    g.append(el("svg:title", {}, text));
    texts.push(text);
    svg.append(g);
  }
  // One listener each for all the frames (thousands on a large profile: bench/webpaint.sh).
  const frameOf = (e) => { const g = e.target.closest("g.fr"); return g ? +g.dataset.i : -1; };
  svg.addEventListener("mouseover", (e) => { const i = frameOf(e); if (i >= 0) details.textContent = texts[i]; });
  svg.addEventListener("click", (e) => {
    const i = frameOf(e);
    if (i >= 0) onZoom(frames[i].d === 0 ? [] : frames[i].path);
  });
  box.replaceChildren(svg);
  return svg;
}

function fmtBytesOr(v, unit) {
  return unit === "bytes" ? fmtBytes(v) : String(v) + (unit && unit !== "count" ? " " + unit : "");
}

function highlight(svg, term) {
  let re = null;
  try { re = term ? new RegExp(term) : null; } catch (e) { re = null; }
  svg.querySelectorAll("g.fr").forEach((g) => {
    const r = g.querySelector("rect");
    if (!r.dataset.fill) r.dataset.fill = r.getAttribute("fill");
    r.setAttribute("fill", re && re.test(g.dataset.name) ? "#d63adf" : r.dataset.fill);
  });
}

/* The bottom-up (callers) tree of a top-down one: its first level holds the functions
 * with flat use, each as wide as its flat; under a function, the functions that called
 * it, each as wide as the part of that flat reached through it, down to the outermost
 * caller (heaptrack's bottom-up tree, an inverted flame graph). Built from the self values
 * along each path of the top-down tree, so the frames the server left out (under 0.01% of
 * the total) are missing here too. */
function invertTree(root) {
  const mk = (n) => ({ n, v: 0, s: 0, b: 0, c: [], m: new Map() });
  const top = mk(root.n);
  (function walk(node, path) {
    if (path.length && node.s) {
      let at = top;
      top.v += node.s;
      for (let i = path.length - 1; i >= 0; i--) {
        let k = at.m.get(path[i]);
        if (!k) { k = mk(path[i]); at.m.set(path[i], k); at.c.push(k); }
        k.v += node.s;
        at = k;
      }
    }
    for (const c of node.c) walk(c, path.concat(c.n));
  })(root, []);
  (function tidy(n) {
    delete n.m;
    n.c.sort((x, y) => (x.n < y.n ? -1 : x.n > y.n ? 1 : 0));
    n.c.forEach(tidy);
  })(top);
  return top;
}

async function renderFlame() {
  $("flame-invert").textContent = state.invert ? "Top-down (callees)" : "Bottom-up (callers)";
  if (state.b === null) { $("flamebox").replaceChildren(); return; }
  const j = await api("flame", viewParams({ id: state.b }));
  if (state.invert) j.root = invertTree(j.root);
  $("flame-summary").textContent = "Profile B #" + j.id + " · " + j.sample_type + " · total " +
    fmtBytesOr(j.root.v, j.unit) + (state.invert ? " · bottom-up: each function's flat use, " +
    "its callers below it" : "") + " · click a frame to zoom, right-click to refine";
  const svg = drawFlame($("flamebox"), $("flame-details"), j, state.zoom,
                        (p) => { state.zoom = p; renderFlame(); }, false);
  highlight(svg, $("flame-search").value);
}

/* ---- Diff --------------------------------------------------------------------------- */

async function renderDiff() {
  const body = $("diff-table").tBodies[0];
  const sum = $("diff-summary");
  if (state.a === null || state.b === null) {
    sum.textContent = "Pick two profiles.";
    body.replaceChildren();
    return;
  }
  const table = state.diffMode === "table";
  $("diff-table").hidden = !table;
  $("dflame").hidden = table;
  $("diff-mode").textContent = table ? "Show as flame graph" : "Show as table";
  if (!table) {
    const j = await api("flame", viewParams({ id: state.b, base: state.a }));
    sum.textContent = "B #" + state.b + " against A #" + state.a + " · " + j.sample_type +
                      " · click a frame to zoom, right-click to refine";
    drawFlame($("dflamebox"), $("dflame-details"), j, state.dzoom,
              (p) => { state.dzoom = p; renderDiff(); }, true);
    return;
  }
  const j = await api("diff", viewParams({ a: state.a, b: state.b }));
  sum.replaceChildren("A #" + j.a + " ", el("b", {}, j.a_total_label), " → B #" + j.b + " ",
                      el("b", {}, j.b_total_label), " · change ",
                      el("b", { id: "diff-delta" }, (j.b_total >= j.a_total ? "+" : "") + j.delta_label),
                      " · " + j.sample_type + " · percentages of A's total");
  body.replaceChildren(...j.rows.map((r) => el("tr", { class: r.change, "data-name": r.name, "data-fn": r.fn },
    el("td", { class: "flat" }, (r.flat > 0 ? "+" : "") + r.flat_label), el("td", {}, r.flat_pct),
    el("td", {}, r.sum_pct), el("td", { class: "cum" }, (r.cum > 0 ? "+" : "") + r.cum_label),
    el("td", {}, r.cum_pct), el("td", { class: "chg" }, r.change),
    el("td", { class: "name", title: r.file || "" }, r.name))));
  if (!j.rows.length) body.append(el("tr", {}, el("td", { colspan: 7, class: "name" }, "No change.")));
}

