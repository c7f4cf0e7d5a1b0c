/* heapsift web: refinements and the pinned baseline. The refinements are pprof's refine
 * menu as removable chips: focus, ignore, hide, show (regular expressions, POSIX extended,
 * as the command line's --focus...), tagfocus, tagignore (label filters: tenant=acme,
 * bytes=64kb:) and the granularity when it is not "functions". Every view is asked with
 * them (viewParams); chips of one regular-expression kind are joined as (a)|(b), as pprof's
 * web UI joins them, a new tag filter replaces the one of its kind. They are added by the
 * header's kind, text and Add (checked by the server first: a bad one is not added, its
 * error is shown), or by a right-click on a function (a Top or Diff row, a flame frame, a
 * graph box: focus on, ignore, hide, show only). Pinning profile A (POST /api/pin) keeps it
 * while the ring rolls on; the URL says pin=1 and a page opened on it pins A again. */
/* ---- refinements ------------------------------------------------------------------------ */

const REFINE_KINDS = ["focus", "ignore", "hide", "show", "tagfocus", "tagignore"];
const REFINE_TAGS = ["tagfocus", "tagignore"];
const REFINE_HINT = {
  focus: "regex: keep its stacks", ignore: "regex: drop its stacks", hide: "regex: drop its frames",
  show: "regex: keep only its frames", tagfocus: "label: key=value", tagignore: "label: key=value",
};

/* The API arguments of refinements list: one per kind. */
function refineParams(list) {
  const p = {};
  for (const kind of REFINE_KINDS) {
    const vs = list.filter((r) => r.kind === kind).map((r) => r.value);
    if (vs.length) p[kind] = vs.length === 1 ? vs[0] : vs.map((v) => "(" + v + ")").join("|");
  }
  return p;
}

/* The list with kind=value added (a tag filter replaces its kind's; a repeat is dropped). */
function refineWith(list, kind, value) {
  const keep = list.filter((r) => !(r.kind === kind && (REFINE_TAGS.includes(kind) || r.value === value)));
  return keep.concat([{ kind, value }]);
}

/* Replaces every refinement of kind by value (none when value is null). */
function refineSet(kind, value) {
  state.refine = state.refine.filter((r) => r.kind !== kind);
  if (value !== null) state.refine.push({ kind, value });
  state.zoom = state.dzoom = null;
}

function refineToQuery(q) {
  for (const r of state.refine) q.append(r.kind, r.value);
  if (state.a !== null && state.profiles.some((p) => p.id === state.a && p.pinned)) q.set("pin", "1");
}

function refineFromQuery(q) {
  state.refine = [];
  for (const kind of REFINE_KINDS) for (const v of q.getAll(kind)) if (v) state.refine.push({ kind, value: v });
  state.pinWanted = q.get("pin") === "1";
}

function refineRemove(i) {
  state.refine.splice(i, 1);
  state.zoom = state.dzoom = null;
  render();
}

/* Adds kind=value after asking the server whether it applies (a 400 names the bad one). */
async function refineAdd(kind, value) {
  const err = $("refine-err");
  value = value.trim();
  if (!value) return;
  const next = refineWith(state.refine, kind, value);
  if (state.b !== null) {
    try {
      await api("top", { ...viewParams({ id: state.b, n: 1 }), ...refineParams(next) });
    } catch (e) {
      err.textContent = e.message;
      err.hidden = false;
      $("refine-bar").hidden = false;
      return;
    }
  }
  err.hidden = true;
  state.refine = next;
  state.zoom = state.dzoom = null;
  $("refine-value").value = "";
  render();
}

function chip(kind, value, onRemove) {
  const x = el("button", { class: "x", title: "remove", "aria-label": "remove " + kind + " " + value }, "×");
  x.addEventListener("click", onRemove);
  return el("span", { class: "chip " + kind, "data-kind": kind, "data-value": value },
            el("b", {}, kind), " ", el("span", { class: "v" }, value), x);
}

/* The chips, the pin button and note: redrawn before every view. */
function renderRefine() {
  const chips = state.refine.map((r, i) => chip(r.kind, r.value, () => refineRemove(i)));
  if (state.gran !== "functions") {
    chips.push(chip("granularity", state.gran, () => {
      state.gran = "functions";
      $("gran").value = state.gran;
      render();
    }));
  }
  $("chips").replaceChildren(...(chips.length ? [el("span", { class: "lbl" }, "Refined by")] : []), ...chips);
  const a = state.profiles.find((p) => p.id === state.a);
  const pins = state.profiles.filter((p) => p.pinned).length;
  $("pin-a").textContent = a && a.pinned ? "Unpin A" : "Pin A";
  $("pin-a").disabled = !a;
  const failed = state.pinError && state.pinError.a === state.a;
  $("pin-note").classList.toggle("bad", !!failed);
  $("pin-note").textContent = failed ? "Cannot pin A #" + state.a + ": " + state.pinError.msg
    : a && a.pinned ? "A #" + a.id + " is pinned: kept while the ring of " + state.ring +
      " rolls on (" + pins + " of " + state.maxPins + " pins)" : "";
  $("refine-bar").hidden = !chips.length && !$("pin-note").textContent && $("refine-err").hidden;
}

/* ---- the context menu on a function -------------------------------------------------- */

/* The function of a node name at the current granularity ("f file:line", "addr f"). */
function fnOfName(name) {
  if (state.gran === "functions") return name;
  let n = name.replace(/ [^ ]*:\d+$/, "");
  if (state.gran === "addresses") n = n.replace(/^[0-9a-f]+ /, "");
  return n;
}

function ctxHide() {
  $("ctxmenu").hidden = true;
}

function ctxOpen(e, fn) {
  if (!fn) return;
  e.preventDefault();
  const m = $("ctxmenu"), re = "^" + escapeRe(fn) + "$";
  const item = (kind, text) => {
    const b = el("button", { "data-kind": kind }, text);
    b.addEventListener("click", () => { ctxHide(); refineAdd(kind, re); });
    return b;
  };
  const peek = el("button", { "data-kind": "peek" }, "Callers and callees");
  peek.addEventListener("click", () => { ctxHide(); showFn("peek", fn); });
  m.replaceChildren(el("div", { class: "ttl" }, fn), item("focus", "Focus on it"),
                    item("ignore", "Ignore it"), item("hide", "Hide it"), item("show", "Show only it"),
                    peek);
  m.style.left = Math.min(e.pageX, window.scrollX + innerWidth - 220) + "px";
  m.style.top = e.pageY + "px";
  m.hidden = false;
}

/* ---- pinning profile A ------------------------------------------------------------------- */

async function pinSet(pin) {
  if (state.a === null) return;
  state.pinError = null;
  try {
    await fetchPin(pin ? "pin" : "unpin", state.a);
    state.pinWanted = pin;
  } catch (e) {
    state.pinError = { a: state.a, msg: e.message };
  }
  await loadProfiles();
  render();
}

async function fetchPin(what, id) {
  return apiPost(what, { target: state.target, id });
}

/* A URL saying pin=1 pins A again when it is kept and not pinned; true when it did. */
async function pinRestore() {
  const a = state.profiles.find((p) => p.id === state.a);
  if (!state.pinWanted || !a || a.pinned) return false;
  state.pinWanted = false;
  try {
    await fetchPin("pin", a.id);
  } catch (e) {
    showError(e.message);
    return false;
  }
  await loadProfiles();
  return true;
}

function initRefine() {
  state.ring = 32;
  state.maxPins = 8;
  api("targets").then((j) => { state.ring = j.ring; state.maxPins = j.max_pins; }).catch(() => {});
  const kind = $("refine-kind"), value = $("refine-value");
  const hint = () => { value.placeholder = REFINE_HINT[kind.value]; };
  kind.addEventListener("change", hint);
  hint();
  $("refine-add").addEventListener("click", () => refineAdd(kind.value, value.value));
  value.addEventListener("keydown", (e) => { if (e.key === "Enter") refineAdd(kind.value, value.value); });
  $("pin-a").addEventListener("click", () => {
    const a = state.profiles.find((p) => p.id === state.a);
    pinSet(!(a && a.pinned));
  });
  const rows = (sel) => $(sel).addEventListener("contextmenu", (e) => {
    const tr = e.target.closest("tr[data-name]");
    if (tr) ctxOpen(e, tr.dataset.fn || fnOfName(tr.dataset.name));
  });
  rows("top-table");
  rows("diff-table");
  for (const box of ["flamebox", "dflamebox"]) {
    $(box).addEventListener("contextmenu", (e) => {
      const g = e.target.closest("g.fr[data-name]");
      if (g && g.dataset.name !== "all") ctxOpen(e, fnOfName(g.dataset.name));
    });
  }
  $("graphbox").addEventListener("contextmenu", (e) => {
    const g = e.target.closest("g.node[data-fn]");
    if (g) ctxOpen(e, g.dataset.fn);
  });
  document.addEventListener("click", (e) => { if (!e.target.closest("#ctxmenu")) ctxHide(); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") ctxHide(); });
}
