// The flame graph SVG's script (src/common/reports/report_flame.c) in headless Chromium: hover,
// click to zoom, reset, search. Run by tests/integration/flamegraph_browser.sh, which
// writes the pages to open and the truth about them (live bytes of known sites) into a
// JSON array of targets:
//   {label, url, total, hover: {name, bytes}, clicks: [{name, hidden: [names]}],
//    search: {re, bytes}, key_search: {re, bytes}}
// usage: node flamegraph_browser.mjs WANT.json SCREENSHOT_PREFIX
// Prints "N passed, N failed" and exits 1 on any failure.
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [wantFile, shots] = process.argv.slice(2);
const targets = JSON.parse(readFileSync(wantFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;
// HTTP errors by URL; the browser's own /favicon.ico probe of the HTML page is not the
// page's (its 404 is also the only console error "Failed to load resource" then).
const httpErrors = [];
page.on("response", (r) => { if (r.status() >= 400) httpErrors.push(r.status() + " " + r.url()); });
const pageOwn = (u) => !/\/favicon\.ico$/.test(u);
const FULL = 1180, PAD = 10; // the SVG's 1200 px less its two paddings
const HIGHLIGHT = "rgb(230,0,230)";
const near = (a, b, tol = 0.05) => Math.abs(a - b) <= tol;
const sel = (name) => `g.f[data-n="${name}"]`;
const UNITS = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

// Every frame as drawn now: name, depth, value, rect x and width, shown, opacity, fill.
function layout() {
  return page.evaluate(() => [...document.querySelectorAll("g.f")].map((g) => {
    const r = g.querySelector("rect");
    return { n: g.getAttribute("data-n"), d: +g.getAttribute("data-d"),
             v: +g.getAttribute("data-v"), x: +r.getAttribute("x"), w: +r.getAttribute("width"),
             shown: getComputedStyle(g).display !== "none",
             op: getComputedStyle(g).opacity, fill: r.getAttribute("fill") };
  }));
}

// The first layout restored: every frame shown, undimmed, where it was.
async function checkRestored(t, first, how) {
  const now = await layout();
  const bad = now.filter((f, i) => !f.shown || f.op !== "1" || !near(f.x, first[i].x, 0.01) ||
                                   !near(f.w, first[i].w, 0.01));
  check(bad.length === 0, `${t.label}: ${how} restores all ${now.length} frames`,
        bad.map((f) => f.n).join(" "));
}

// After a click on frame z (index zi of the first layout): z spans the full width; its
// subtree (deeper frames inside its span) is shown and scaled by FULL / z.w; its ancestors
// (shallower frames spanning it) are shown full width and dimmed; every other frame hidden.
async function checkZoom(t, first, zi, hidden) {
  const z = first[zi], s = FULL / z.w, now = await layout();
  const inSpan = (f) => f.x >= z.x - 0.01 && f.x + f.w <= z.x + z.w + 0.01;
  const zoomed = now[zi];
  check(zoomed.shown && near(zoomed.x, PAD) && near(zoomed.w, FULL),
        `${t.label}: click on ${z.n} makes it full width`,
        `x ${zoomed.x} width ${zoomed.w} (was ${z.w.toFixed(2)}; the root is ${now[0].n} at ` +
        `width ${now[0].w})`);
  const bad = [];
  first.forEach((f, i) => {
    const g = now[i];
    let ok;
    if (i === zi) return;
    if (f.d > z.d && inSpan(f))
      ok = g.shown && g.op === "1" && near(g.w, f.w * s, 0.05) &&
           near(g.x, PAD + (f.x - z.x) * s, 0.05);
    else if (f.d < z.d && f.x <= z.x + 0.01 && f.x + f.w >= z.x + z.w - 0.01)
      ok = g.shown && g.op === "0.5" && near(g.w, FULL) && near(g.x, PAD);
    else
      ok = !g.shown;
    if (!ok) bad.push(`${f.n}@${f.d} shown=${g.shown} op=${g.op} x=${g.x} w=${g.w}`);
  });
  check(bad.length === 0, `${t.label}: zoomed into ${z.n}: ancestors full width and dimmed, ` +
        `subtree scaled, the rest hidden`, bad.join("; "));
  for (const h of hidden)
    check(!(await page.locator(sel(h)).first().isVisible()),
          `${t.label}: ${h} hidden after the click on ${z.n}`);
  check(await page.locator(sel("all")).isVisible(), `${t.label}: the root stays, as a parent`);
  const label = await page.locator(sel(z.n) + " text").first().textContent();
  check(label === z.n, `${t.label}: the zoomed frame's label is its whole name`, label);
}

// A search: matching frames (below the root) highlighted, the others not; the share
// reported is the truth's share of the root.
async function checkSearch(t, first, q, how) {
  const re = new RegExp(q.re), now = await layout();
  const wrong = now.filter((f) => (f.fill === HIGHLIGHT) !== (f.d > 0 && re.test(f.n)));
  check(wrong.length === 0, `${t.label}: ${how} /${q.re}/ highlights exactly the matches`,
        wrong.map((f) => `${f.n}:${f.fill}`).join(" "));
  const text = await page.locator("#matched").textContent();
  const m = /Matched: ([\d.]+)%/.exec(text);
  const want = 100 * q.bytes / first[0].v;
  check(m && near(+m[1], want, 0.051),
        `${t.label}: ${how} /${q.re}/ reports ${want.toFixed(2)}% (known truth)`, text);
}

// Runs trigger, answers the prompt it opens with answer; returns "type: message", or
// throws when no dialog opens within 10 s (a dead script opens none).
async function answerPrompt(answer, trigger) {
  let asked = "", handler, timer;
  const done = new Promise((resolve, reject) => {
    handler = async (d) => {
      asked = d.type() + ": " + d.message();
      await d.accept(answer);
      resolve();
    };
    page.once("dialog", handler);
    timer = setTimeout(() => reject(new Error("no prompt within 10 s")), 10000);
  });
  try {
    await trigger();
    await done;
  } finally {
    clearTimeout(timer);
    page.off("dialog", handler);
  }
  return asked;
}

async function target(t) {
  await page.goto(t.url);
  await page.waitForSelector("g.f");
  const first = await layout();
  check(first[0].n === "all" && Math.abs(first[0].v - t.total) <= 0.01 * t.total,
        `${t.label}: root holds the known live heap ${t.total}`, `${first[0].n} ${first[0].v}`);

  // Hover: the detail line shows the frame's title, name (value, share), both true.
  const h = first.find((f) => f.n === t.hover.name);
  check(h !== undefined, `${t.label}: ${t.hover.name} drawn`);
  await page.hover(sel(t.hover.name));
  const det = await page.locator("#details").textContent();
  const title = await page.locator(sel(t.hover.name) + " > title").textContent();
  check(det === title, `${t.label}: hover shows the frame's title`, `'${det}' vs '${title}'`);
  const m = /^(.*) \(([\d.]+)([kMGT]?B), ([\d.]+)%\)$/.exec(det);
  const pct = 100 * t.hover.bytes / first[0].v;
  check(m && m[1] === t.hover.name && Math.abs(m[2] * UNITS[m[3]] - t.hover.bytes) <=
        0.006 * UNITS[m[3]] && near(+m[4], pct, 0.0051 + pct * 1e-3),
        `${t.label}: hover on ${t.hover.name}: ${t.hover.bytes} bytes, ${pct.toFixed(2)}%`, det);
  await page.screenshot({ path: `${shots}-${t.label}-hover.png` });
  await page.mouse.move(1, 1);

  // Click to zoom, then the three ways back.
  const backs = [["Reset zoom", () => page.click("#reset")],
                 ["a click on the root", () => page.click(sel("all"))],
                 ["Escape", () => page.keyboard.press("Escape")]];
  for (const [k, c] of t.clicks.entries()) {
    const zi = first.findIndex((f) => f.n === c.name);
    check(zi > 0, `${t.label}: ${c.name} drawn, not the root`);
    if (zi <= 0) continue;
    await page.click(sel(c.name));
    await checkZoom(t, first, zi, c.hidden);
    await page.screenshot({ path: `${shots}-${t.label}-zoom-${c.name}.png` });
    const [how, back] = backs[k % backs.length];
    await back();
    await checkRestored(t, first, how);
  }
  if (t.clicks.length < backs.length) { // every way back tried on each page
    for (const [how, back] of backs.slice(t.clicks.length)) {
      await page.click(sel(t.clicks[0].name));
      await back();
      await checkRestored(t, first, how);
    }
  }

  // Search: the button's prompt, answered through the dialog handler; then "/"; then an
  // empty answer, which clears. search() finishes synchronously once the prompt returns.
  const asked = await answerPrompt(t.search.re, () => page.click("#search"));
  check(asked.startsWith("prompt: Search"), `${t.label}: Search asks through a prompt`, asked);
  await checkSearch(t, first, t.search, "Search");
  await page.screenshot({ path: `${shots}-${t.label}-search.png` });
  await answerPrompt(t.key_search.re, () => page.keyboard.press("/"));
  await checkSearch(t, first, t.key_search, '"/"');
  await answerPrompt("", () => page.click("#search"));
  check(!/Matched/.test(await page.locator("#matched").textContent()),
        `${t.label}: an empty search clears the share`);
  const after = await layout();
  check(after.every((f, i) => f.fill === first[i].fill),
        `${t.label}: an empty search restores the colours`);
}

await run(ctx, shots, async () => {
  for (const t of targets) await target(t);
  const own = httpErrors.filter(pageOwn);
  check(own.length === 0, "no HTTP errors", own.join(" "));
  const errors = pageErrors.filter((e) => !(own.length === 0 && /^Failed to load resource/.test(e)));
  check(errors.length === 0, "no page errors", pageErrors.join(" | "));
  const origins = new Set(targets.map((t) => new URL(t.url).origin));
  const off = requests.filter((u) => !u.startsWith("file:") && !origins.has(new URL(u).origin));
  check(off.length === 0, "no request off the pages' own origin (self-contained)", off.join(" "));
});
