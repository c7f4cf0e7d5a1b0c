/* heapsift web: the call graph (pan, zoom, click to focus), the source lines, and a
 * function's callers and callees (Peek, as pprof's). */
/* ---- Graph: `heapsift graph` of B (or B against A), pan, zoom, click to focus ---------- */

const graphView = { vb: null, home: null };

function graphSetBox(vb) {
  graphView.vb = vb;
  const svg = $("graphbox").querySelector("svg");
  if (svg) svg.setAttribute("viewBox", vb.map((v) => v.toFixed(2)).join(" "));
}

/* The SVG point under a mouse event (client coordinates). */
function graphPoint(svg, e) {
  const pt = svg.createSVGPoint();
  pt.x = e.clientX;
  pt.y = e.clientY;
  return pt.matrixTransform(svg.getScreenCTM().inverse());
}

async function renderGraph() {
  const box = $("graphbox");
  if (state.b === null) {
    $("graph-summary").textContent = "No profile yet for this target.";
    box.replaceChildren();
    return;
  }
  const p = viewParams({ id: state.b });
  const diff = $("graph-diff").checked && state.a !== null && state.a !== state.b;
  if (diff) p.base = state.a;
  const j = await api("graph", p);
  const doc = new DOMParser().parseFromString(j.svg, "image/svg+xml");
  const svg = document.importNode(doc.documentElement, true);
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.id = "graph-svg";
  box.replaceChildren(svg);
  // Graphviz titles a node with its DOT name (N1, N2, ...); heapsift's layout ids it node1...
  for (const g of svg.querySelectorAll("g.node")) {
    const t = (g.querySelector("title") || {}).textContent || "";
    const m = /^N(\d+)$/.exec(t) || (j.layout === "heapsift" && /^node(\d+)$/.exec(g.id));
    if (!m) continue;
    g.dataset.name = j.names[+m[1] - 1];
    g.dataset.fn = j.functions[+m[1] - 1];
  }
  const vb = svg.getAttribute("viewBox").trim().split(/[\s,]+/).map(Number);
  graphView.home = vb;
  graphSetBox(vb.slice());
  $("graph-summary").replaceChildren("Profile B #" + state.b +
    (diff ? " against A #" + state.a + " (red grew, green shrank beyond noise)" : "") + " · ",
    el("b", {}, j.nodes + " nodes, " + j.edges + " edges"),
    " · drawn by " + (j.layout === "dot" ? "Graphviz" : "heapsift (Graphviz not installed)") +
    " · wheel: zoom, drag: pan, click a box: focus on it, right-click: refine");
}

function graphFocus(fn) {
  refineSet("focus", "^" + escapeRe(fn) + "$");
  const d = $("graph-details");
  const src = el("button", { id: "graph-source" }, "Source of " + fn);
  src.addEventListener("click", () => showFn("source", fn));
  const peek = el("button", { id: "graph-peek" }, "Callers and callees");
  peek.addEventListener("click", () => showFn("peek", fn));
  const clear = el("button", { id: "graph-unfocus" }, "Clear focus");
  clear.addEventListener("click", () => { refineSet("focus", null); d.replaceChildren(); render(); });
  d.replaceChildren("Focused on " + fn + " ", src, " ", peek, " ", clear);
  render();
}

function initGraph() {
  const box = $("graphbox");
  let drag = null;
  box.addEventListener("wheel", (e) => {
    const svg = box.querySelector("svg");
    if (!svg || !graphView.vb) return;
    e.preventDefault();
    const at = graphPoint(svg, e), f = Math.exp(e.deltaY * 0.0015);
    const [x, y, w, h] = graphView.vb;
    graphSetBox([at.x - (at.x - x) * f, at.y - (at.y - y) * f, w * f, h * f]);
  }, { passive: false });
  box.addEventListener("pointerdown", (e) => {
    if (!graphView.vb || e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, vb: graphView.vb.slice(), moved: false };
  });
  window.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    box.classList.add("dragging");
    const [x, y, w, h] = drag.vb;
    const k = Math.max(w / box.clientWidth, h / box.clientHeight);
    graphSetBox([x - dx * k, y - dy * k, w, h]);
  });
  window.addEventListener("pointerup", (e) => {
    if (!drag) return;
    const moved = drag.moved;
    drag = null;
    box.classList.remove("dragging");
    if (moved) return;
    const g = e.target.closest && e.target.closest("#graphbox g.node[data-fn]");
    if (g) graphFocus(g.dataset.fn);
  });
  $("graph-fit").addEventListener("click", () => { if (graphView.home) graphSetBox(graphView.home.slice()); });
  $("graph-diff").addEventListener("change", () => render());
}

/* ---- Source: `heapsift list` of B; Peek: `heapsift peek` of B ------------------------- */

/* The text view of tab ("source" or "peek"): API path, the hint, the command it equals. */
const fnViews = {
  source: { path: "source", cmd: "heapsift list",
            hint: "Name a function (a regular expression), or use \u201cSource of\u201d under a box of the Graph." },
  peek: { path: "peek", cmd: "heapsift peek, as go tool pprof -peek",
          hint: "Name a function (a regular expression), or right-click one: \u201cCallers and callees\u201d." },
};

async function renderFnText(tab) {
  const v = fnViews[tab], fn = $(tab + "-fn").value.trim(), pre = $(tab + "-text");
  if (state.b === null || !fn) {
    $(tab + "-summary").textContent = state.b === null ? "No profile yet for this target." : v.hint;
    pre.hidden = true;
    return;
  }
  const j = await api(v.path, viewParams({ id: state.b, fn }));
  $(tab + "-summary").textContent = "Profile B #" + state.b + " · " + j.functions + " function" +
    (j.functions === 1 ? "" : "s") + " (" + v.cmd + ")";
  pre.textContent = j.text;
  pre.hidden = false;
}

const renderSource = () => renderFnText("source");
const renderPeek = () => renderFnText("peek");

/* Opens tab ("source" or "peek") on the function named fn. */
function showFn(tab, fn) {
  $(tab + "-fn").value = "^" + escapeRe(fn) + "$";
  setTab(tab);
}
