/* heapsift web: the wiring: the views by tab, rendering in order, the controls' events and
 * the poll. */
/* ---- wiring --------------------------------------------------------------------------- */

const renderers = { diagnose: renderDiagnose, top: renderTop, flame: renderFlame, graph: renderGraph, source: renderSource, peek: renderPeek,
                    diff: renderDiff, series: renderSeries, suspects: renderSuspects,
                    history: renderHistory };

let rendering = Promise.resolve();
function render() {
  rendering = rendering.then(async () => {
    const drawn = state.tab + ":" + state.a + ":" + state.b; // what it draws, as it starts
    const target = state.target;
    try {
      renderRefine();
      await renderers[state.tab]();
      showError("");
    } catch (e) {
      if (state.target === target) showError(e.message); // else: the target was closed, left
    }
    saveState();
    document.body.dataset.rendered = drawn + ":" + Date.now();
  });
  return rendering;
}

function choose(which, id) {
  state[which] = id;
  if (which === "b") state.followB = id === state.profiles[state.profiles.length - 1]?.id;
  $(which === "a" ? "profA" : "profB").value = String(id);
  state.zoom = state.dzoom = null;
  render();
}

function showTab(tab) {
  state.tab = tab;
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("on", b.dataset.tab === tab));
  for (const t of Object.keys(renderers)) $("view-" + t).hidden = t !== tab;
  saveState();
}

function setTab(tab) {
  showTab(tab);
  render();
}

async function refresh(force) {
  const target = state.target;
  try {
    // Both at once: one round trip less before the first paint (bench/webpaint.sh).
    const [targets, profiles] = await Promise.allSettled([loadTargets(), loadProfiles()]);
    if (targets.status === "rejected") throw targets.reason;
    if (state.target !== target) return; // switched meanwhile: that switch refreshes
    if (profiles.status === "rejected") {
      // A target closed elsewhere (another page, a URL kept): the first one left.
      if (state.targets.length && !state.targets.some((t) => t.index === state.target)) {
        await switchTarget(null);
        return;
      }
      throw profiles.reason;
    }
    if (await pinRestore() || profiles.value || force) await render();
  } catch (e) {
    if (state.target === target) showError("cannot reach heapsift web: " + e.message);
  }
}

function init() {
  $("top-table").addEventListener("click", (e) => {
    const tr = e.target.closest("tr[data-name]");
    if (!tr) return;
    $("flame-search").value = "^" + escapeRe(tr.dataset.name) + "$";
    setTab("flame");
  });
  $("tabs").addEventListener("click", (e) => { if (e.target.dataset.tab) setTab(e.target.dataset.tab); });
  $("target").addEventListener("change", () => switchTarget(+$("target").value));
  $("profA").addEventListener("change", () => choose("a", +$("profA").value));
  $("profB").addEventListener("change", () => choose("b", +$("profB").value));
  $("sample").addEventListener("change", () => { state.sample = $("sample").value; render(); });
  initRefine();
  $("flame-reset").addEventListener("click", () => { state.zoom = null; render(); });
  $("flame-invert").addEventListener("click", () => {
    state.invert = !state.invert;
    state.zoom = null;
    render();
  });
  initGraph();
  initHistory();
  /* In-page link: scrolls, and leaves the fragment (the page's state) alone. */
  $("series-acct-link").addEventListener("click", (e) => {
    e.preventDefault();
    $("acct-title").scrollIntoView();
  });
  for (const tab of ["source", "peek"]) {
    $(tab + "-go").addEventListener("click", () => render());
    $(tab + "-fn").addEventListener("keydown", (e) => { if (e.key === "Enter") render(); });
  }
  $("flame-search").addEventListener("input", () => {
    const svg = $("flamebox").querySelector("svg");
    if (svg) highlight(svg, $("flame-search").value);
  });
  $("diff-mode").addEventListener("click", () => {
    state.diffMode = state.diffMode === "table" ? "flame" : "table";
    render();
  });
  $("gran").addEventListener("change", () => { state.gran = $("gran").value; render(); });
  // The tab the URL names, drawn once the profiles are in (refresh, below): drawn before,
  // its figures would be in their own units, then redrawn in the page's.
  const tab = loadState();
  if (renderers[tab]) showTab(tab);
  // A fragment typed or followed (our own replaceState fires no hashchange): drawn once
  // the profiles of the target it names are in (it may name another, or a closed one).
  window.addEventListener("hashchange", () => {
    const t = loadState();
    showTab(renderers[t] ? t : state.tab);
    refresh(true);
  });
  refresh(true).then(function tick() {
    setTimeout(() => refresh(false).then(tick), Math.max(1000, state.interval * 1000));
  });
}

init();
