// The History tab and the Series' interval band of the `heapsift web` page in headless
// Chromium: run by tests/integration/web_history.sh over two directory targets of six dumps
// of tests/programs/sitehist (target 0 at rate 1, target 1 sampled).
//
// usage: node web_history.mjs URL HEAPSIFT EXACT_DIR SAMPLED_DIR SCREENSHOT_PREFIX
// Checks: the cards are the sites of `heapsift top` of profile B in its order, N of them
// (8, then 4 picked in the page); each point's data-value, data-lo and data-hi are the
// site's flat and 95% interval in `heapsift top --ci --unit B` of that dump (0 where top
// has no such row); at rate 1 they are also sitehist's arithmetic, and sampled, every
// interval of a site sampled in that dump holds the exact run's value; the small charts
// share one time axis and each has round ticks in the page's unit (0.005MB steps too); a
// click on site_rise shows it large with its two stacks (from_left 3/4, from_right 1/4); a
// reload of the URL gives the same view; the callers button opens the flame graph
// bottom-up on it; every Series live heap point lies in its band. Prints "N passed, N
// failed".
import { execFileSync } from "node:child_process";
import { check, openPage, run } from "./harness.mjs";

const [url, cli, exactDir, sampledDir, shots] = process.argv.slice(2);
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

// sitehist's own arithmetic: live bytes of each site after step s (from 0).
const truth = {
  site_const: () => 1048576, site_tiny: () => 12288,
  site_fall_init: (s) => 393216 - 32768 * (s + 1), site_rise: (s) => 32768 * (s + 1),
  site_slow: (s) => 16384 * (s + 1),
};
const stepOf = (label) => +label.match(/step\.(\d+)/)[1];

// `heapsift top --ci --unit B FILE`: per name, flat and its interval in bytes, in order.
function top(file) {
  const out = execFileSync(cli, ["top", "--ci", "--unit", "B", file], { encoding: "utf8" });
  const rows = [];
  const num = (s) => (s === "0" ? 0 : parseFloat(s));
  for (const l of out.split("\n")) {
    const m = l.match(/^\s*(\S+)\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(\S+)\.\.(\S+)\s+\S+\.\.\S+\s+(\S.*)$/);
    if (m) rows.push({ name: m[4], v: num(m[1]), lo: num(m[2]), hi: num(m[3]) });
  }
  return rows;
}

async function profiles(target) {
  const r = await fetch(url + "api/profiles?target=" + target);
  return (await r.json()).profiles;
}

// Every point of every card (or of the big chart) as drawn.
const points = () => page.locator("#hist-box circle.hpt").evaluateAll((cs) => cs.map((c) => ({
  site: c.dataset.site, id: +c.dataset.id, v: +c.dataset.value, lo: +c.dataset.lo,
  hi: +c.dataset.hi, cx: +c.getAttribute("cx") })));
const cardNames = () => page.locator("#hist-grid .hcard").evaluateAll((cs) => cs.map((c) => c.dataset.site));

// The points against top of each dump: equal value, and the interval within a byte. A
// site with no sample in a dump (no row of top) reads 0, up to none bytes: at rate R,
// R ln 40 (what goes unsampled with probability 2.5%), 0 at rate 1.
function checkPoints(pts, profs, dir, what, none) {
  const tops = new Map(profs.map((p) => [p.id, top(dir + "/" + p.label)]));
  let bad = [];
  for (const p of pts) {
    const row = tops.get(p.id).find((r) => r.name === p.site) || { v: 0, lo: 0, hi: none };
    if (p.v !== row.v || Math.abs(p.lo - row.lo) > 1 || Math.abs(p.hi - row.hi) > 1)
      bad.push(`${p.site}#${p.id}: ${p.v} ${p.lo}..${p.hi} vs ${row.v} ${row.lo}..${row.hi}`);
  }
  check(pts.length > 0 && !bad.length, `${what}: ${pts.length} points are heapsift top --ci's flat and interval`,
        bad.slice(0, 5).join("; "));
}

function checkTicks(labels, what) {
  const unit = labels.find((l) => l !== "0").replace(/^[0-9.]+/, "");
  const nums = labels.map((l) => (l === "0" ? 0 : +l.slice(0, -unit.length)));
  const step = nums[1] - nums[0], mant = step / 10 ** Math.floor(Math.log10(step));
  const even = nums.every((v, i) => Math.abs(v - i * step) < 1e-9 * Math.max(1, step));
  check(nums[0] === 0 && even && [1, 2, 5].some((k) => Math.abs(mant - k) < 1e-9),
        `${what}: axis ticks at round values`, labels.join(" "));
}

await run(ctx, shots, async () => {
  // ---- target 0, rate 1 ----
  const profs = await profiles(0), b = profs[profs.length - 1];
  const topB = top(exactDir + "/" + b.label).filter((r) => r.v !== 0).map((r) => r.name);
  await page.goto(url + "#history");
  await page.waitForSelector("#view-history:not([hidden]) #hist-grid .hcard");
  check(JSON.stringify(await cardNames()) === JSON.stringify(topB.slice(0, 8)),
        "History: the cards are heapsift top's sites of B, in order", (await cardNames()).join(" "));
  const pts = await points();
  checkPoints(pts, profs, exactDir, "History at rate 1", 0);
  const wrong = pts.filter((p) => {
    const s = stepOf(profs.find((q) => q.id === p.id).label);
    return p.v !== truth[p.site](s) || p.lo !== p.v || p.hi !== p.v;
  });
  check(pts.length === 5 * 6 && !wrong.length, "History at rate 1: every point is sitehist's arithmetic, no interval",
        wrong.slice(0, 3).map((p) => p.site + "#" + p.id + "=" + p.v).join(" "));
  const cxs = new Map();
  for (const p of pts) cxs.set(p.id, (cxs.get(p.id) || new Set()).add(p.cx));
  check([...cxs.values()].every((s) => s.size === 1), "History: the small charts share one time axis");
  for (const name of await cardNames()) {
    const ticks = await page.locator(`#hist-grid .hcard[data-site="${name}"] text.ytick`)
      .evaluateAll((ts) => ts.map((t) => t.textContent));
    checkTicks(ticks, `History: ${name}'s chart`);
  }
  await page.screenshot({ path: shots + "-grid.png", fullPage: true });

  // N = 4: the four largest in B.
  await page.selectOption("#hist-n", "4");
  await page.waitForFunction(() => document.querySelectorAll("#hist-grid .hcard").length === 4);
  check(JSON.stringify(await cardNames()) === JSON.stringify(topB.slice(0, 4)) && page.url().includes("hn=4"),
        "History: 4 sites picked, in the URL", page.url());

  // A click on site_rise: it large, with its two stacks in B.
  await page.locator('#hist-grid .hcard[data-site="site_rise"] .hname').click();
  await page.waitForSelector("#hist-stacks tbody tr");
  const stacks = async () => page.locator("#hist-stacks tbody tr").evaluateAll((rs) =>
    rs.map((r) => ({ v: +r.dataset.value, frames: r.dataset.frames.split(";") })));
  const sb = truth.site_rise(stepOf(b.label)), st = await stacks();
  check(st.length === 2 && st[0].v === sb * 3 / 4 && st[0].frames[1] === "from_left" &&
        st[1].v === sb / 4 && st[1].frames[1] === "from_right" && st.every((x) => x.frames[0] === "site_rise"),
        "History: site_rise's stacks in B are from_left's 3/4 and from_right's 1/4", JSON.stringify(st));
  const big = await points();
  check(big.length === 6 && big.every((p) => p.site === "site_rise") && page.url().includes("site=site_rise"),
        "History: site_rise large, and in the URL", page.url());
  await page.screenshot({ path: shots + "-site.png", fullPage: true });

  // Reload from the URL: the same view.
  await page.reload();
  await page.waitForSelector("#view-history:not([hidden]) #hist-stacks tbody tr");
  check(JSON.stringify(await stacks()) === JSON.stringify(st) &&
        JSON.stringify(await points()) === JSON.stringify(big) && (await page.inputValue("#hist-n")) === "4",
        "History: a reload of the URL shows the same site, stacks and N");

  // Its callers in the flame graph: bottom-up, zoomed on site_rise.
  await page.click("#hist-flame");
  await page.waitForSelector('#view-flame:not([hidden]) #flamebox g.fr[data-name="from_left"]');
  check(page.url().includes("flame=callers") &&
        (await page.locator('#flamebox g.fr[data-name="from_right"]').count()) > 0,
        "History: the callers button shows site_rise's callers in the bottom-up flame graph");

  // Series: each live heap point inside its band (exact: the band is the point).
  await page.click('#tabs button[data-tab="series"]');
  await page.waitForSelector("#view-series:not([hidden]) #series-box circle.pt-inuse");
  const band = async () => page.locator("#series-box circle.pt-inuse").evaluateAll((cs) =>
    cs.map((c) => ({ v: +c.dataset.value, lo: +c.dataset.lo, hi: +c.dataset.hi })));
  const exactBand = await band();
  check(exactBand.length === 6 && exactBand.every((p) => p.lo === p.v && p.hi === p.v) &&
        (await page.locator("#series-box polygon.band-inuse").count()) === 1,
        "Series at rate 1: the band is the line itself", JSON.stringify(exactBand[0]));
  await page.click("#series-acct-link");
  check(page.url().includes("#series"), "Series: the link to the accounting leaves the URL's state", page.url());

  // ---- target 1, sampled ----
  const sprofs = await profiles(1), sb1 = sprofs[sprofs.length - 1];
  await page.goto("about:blank");
  await page.goto(url + "#history&target=1&hn=8");
  await page.waitForFunction(() => document.querySelector("#hist-summary").textContent.includes("sites of profile B"));
  await page.waitForSelector("#hist-grid .hcard");
  const spts = await points();
  checkPoints(spts, sprofs, sampledDir, "History sampled", Math.round(8192 * Math.log(40)));
  const exactOf = (p) => truth[p.site](stepOf(sprofs.find((q) => q.id === p.id).label));
  const sampled = spts.filter((p) => p.v > 0), miss = spts.filter((p) => !(p.lo <= exactOf(p) && exactOf(p) <= p.hi));
  check(sampled.length >= 18 && spts.every((p) => p.lo < p.hi) && !miss.length,
        `History sampled: each of the ${spts.length} points' 95% interval holds the exact value ` +
        `(${spts.length - sampled.length} with no sample: 0 up to 8192 ln 40 bytes)`,
        miss.map((p) => `${p.site}#${p.id} ${p.lo}..${p.hi} vs ${exactOf(p)}`).join("; "));
  const topS = top(sampledDir + "/" + sb1.label).filter((r) => r.v !== 0).map((r) => r.name);
  check(JSON.stringify(await cardNames()) === JSON.stringify(topS.slice(0, 8)),
        "History sampled: the cards are heapsift top's sites of B", (await cardNames()).join(" "));
  await page.screenshot({ path: shots + "-sampled.png", fullPage: true });

  await page.click('#tabs button[data-tab="series"]');
  await page.waitForSelector("#view-series:not([hidden]) #series-box circle.pt-inuse");
  const sband = await band();
  const exactHeap = profs.map((p) => p.inuse);
  check(sband.length === 6 && sband.every((p, i) => p.lo < p.v && p.v < p.hi && p.lo <= exactHeap[i] && exactHeap[i] <= p.hi) &&
        (await page.locator("#series-box polygon.band-inuse").count()) === 1,
        "Series sampled: every live heap point and the exact run's live heap lie in the band",
        JSON.stringify(sband) + " exact " + exactHeap.join(","));
  check((await page.locator("#series-why").innerText()).includes("fragmentation"),
        "Series: the note says why live heap and RSS differ");
  await page.screenshot({ path: shots + "-series.png", fullPage: true });

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:") && u !== "about:blank");
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
