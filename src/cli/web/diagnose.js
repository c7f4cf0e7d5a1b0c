/* heapsift web: the Diagnosis tab, the page's first: the findings of `heapsift diagnose`
 * (/api/diagnose: the engine over the target's kept profiles, oldest first) as cards,
 * largest first, each with its kind, its bytes (readable in the decimal units of the
 * evidence, the exact count beside and on hover), its site, the evidence and the advice;
 * the notes below; "no findings" said plainly. Every string is set as text. */

const DIAG_KINDS = { fragmentation: "fragmentation", growth: "growth", leak: "leak",
                     not_heap: "not heap", blind_spot: "blind spot", top_site: "top site" };

/* bytes as the engine's evidence writes them (diagnose_out.c's diag_mb: decimal units,
 * "151.19 MB"), so that a card reads in one unit throughout. */
function diagBytes(b) {
  if (b >= 1e6) return (b / 1e6).toFixed(2) + " MB";
  if (b >= 1e3) return (b / 1e3).toFixed(1) + " kB";
  return b + " B";
}

/* The findings, largest first (ties keep the server's order: by kind). */
function diagSorted(findings) {
  return findings.map((f, i) => [f, i]).sort((x, y) => (y[0].bytes - x[0].bytes) || (x[1] - y[1]))
                 .map(([f]) => f);
}

function diagCard(f, rank) {
  const part = (cls, label, text) => el("div", { class: "diag-" + cls }, el("b", {}, label + ": "),
                                        el("span", { class: "diag-text" }, text));
  return el("div", { class: "diag-finding", "data-kind": f.kind, "data-bytes": f.bytes },
    el("div", { class: "diag-head" },
       el("span", { class: "diag-rank" }, rank + "."),
       el("span", { class: "diag-kind kind-" + f.kind }, DIAG_KINDS[f.kind] || f.kind),
       el("span", { class: "diag-bytes", title: f.bytes + " bytes" }, diagBytes(f.bytes)),
       el("span", { class: "diag-exact" }, "(" + f.bytes + " bytes)")),
    f.site ? part("site", "site", f.site) : null,
    part("evidence", "evidence", f.evidence || ""),
    part("advice", "advice", f.advice || ""));
}

async function renderDiagnose() {
  const box = $("diagnose");
  if (!state.profiles.length) {
    box.replaceChildren(el("div", { class: "note", id: "diag-none" }, "No profile loaded yet."));
    return;
  }
  const j = await api("diagnose", { target: state.target });
  const findings = diagSorted(j.findings || []);
  const n = state.profiles.length;
  const head = el("p", { class: "summary", id: "diag-summary" },
    "Diagnosis of ", el("b", {}, j.target), " over ",
    n === 1 ? "its one profile" : "its " + n + " kept profiles (a series, oldest first)",
    " · RSS ", j.rss_bytes === null ? "unknown" : diagBytes(j.rss_bytes),
    " · allocator " + (j.allocator || "unknown"), " · as `heapsift diagnose` finds it");
  const list = findings.length
    ? el("div", { id: "diag-findings" }, ...findings.map((f, i) => diagCard(f, i + 1)))
    : el("div", { class: "note", id: "diag-empty" },
         "No findings: nothing wrong was found in these profiles.");
  const notes = (j.notes || []).length
    ? [el("h3", {}, "Notes"), el("ul", { id: "diag-notes" }, ...j.notes.map((x) => el("li", {}, x)))]
    : [];
  box.replaceChildren(head, list, ...notes);
}
