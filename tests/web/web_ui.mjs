// The `heapsift web` page in a real browser: headless Chromium (Debian's) driven by
// playwright-core. Run by tests/integration/web_ui.sh, which starts `heapsift web` over a
// directory of two profiles of tests/programs/grow (A: 4000 objects at site_grow, B: 6000)
// plus an unreachable endpoint, and writes what the page must show (computed with
// `heapsift top`/`diff` and `go tool pprof`) into a JSON file.
//
// usage: node web_ui.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks, as a person would use the page: the Top table's top row and its figure; picking
// profiles A and B; the Diff view's grown site, its delta and verdict; the flame graph's
// frames and widths; the differential flame graph; the Series chart's live heap and RSS
// points; the Suspects panel; the unreachable target's error; a new dump picked up by the
// poller. Prints "N passed, N failed" and exits 1 on any failure.
import { copyFileSync, readFileSync, renameSync } from "node:fs";
import { check, openPage, rowCells, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

await run(ctx, shots, async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="top"]'); // the page opens on the Diagnosis
  await page.waitForSelector("#top-table tbody tr");

  // Top: B (the newest) by default; its top row is the known top site, with the figure
  // `heapsift top` and `go tool pprof -top` print.
  const first = await page.locator("#top-table tbody tr").first().locator("td").allInnerTexts();
  check(first[6] === want.top.name, "Top: top row is " + want.top.name, first[6]);
  check(first[0] === want.top.flat, "Top: its flat is " + want.top.flat + " as in heapsift top",
        first[0]);
  check(first[1] === want.top.flat_pct, "Top: its flat% is " + want.top.flat_pct, first[1]);
  const summary = await page.locator("#top-summary").innerText();
  check(summary.includes(want.top.total), "Top: total " + want.top.total + " shown", summary);
  await page.screenshot({ path: shots + "-top.png", fullPage: true });

  // The profile selectors list both dumps; pick A = the smaller, B = the grown one.
  const opts = await page.locator("#profA option").allInnerTexts();
  check(opts.length === 2, "two profiles listed", JSON.stringify(opts));
  const idOf = async (label) => page.locator("#profA option", { hasText: label }).getAttribute("value");
  const idA = await idOf(want.a_label), idB = await idOf(want.b_label);
  await page.selectOption("#profA", idA);
  await page.selectOption("#profB", idB);

  // Diff: the grown site, its delta and verdict, as `heapsift diff A B` prints them.
  await page.click('#tabs button[data-tab="diff"]');
  const grow = await rowCells(page, "#diff-table", want.diff.name);
  check(grow[0] === "+" + want.diff.flat, `Diff: ${want.diff.name} grew by +${want.diff.flat}`,
        grow[0]);
  check(grow[5] === "grew", `Diff: ${want.diff.name} judged "grew"`, grow[5]);
  check(grow[1] === want.diff.flat_pct, "Diff: its flat% of A is " + want.diff.flat_pct, grow[1]);
  const steady = await rowCells(page, "#diff-table", want.diff.steady);
  check(steady[5] === want.diff.steady_verdict,
        `Diff: ${want.diff.steady} judged "${want.diff.steady_verdict}" as in heapsift diff`,
        steady[5]);
  const dsum = await page.locator("#diff-summary").innerText();
  check(dsum.includes(want.a_total) && dsum.includes(want.top.total),
        `Diff: totals A ${want.a_total} and B ${want.top.total} shown`, dsum);
  await page.screenshot({ path: shots + "-diff.png", fullPage: true });

  // Differential flame graph: the grown site is drawn red (grew since A).
  await page.click("#diff-mode");
  const dg = page.locator(`#dflamebox g.fr[data-name="${want.diff.name}"] rect`);
  await dg.waitFor();
  const fill = await dg.getAttribute("fill");
  const [r, g, b] = (fill.match(/\d+/g) || []).map(Number);
  check(r > g && r > b, `Diff flame: ${want.diff.name} drawn red`, fill);
  await page.click("#diff-mode");

  // Flame graph of B: the known frames, widths proportional to their share.
  // Clicking a Top row shows it in the flame graph, highlighted.
  await page.click('#tabs button[data-tab="top"]');
  await page.click(`#top-table tbody tr[data-name="${want.top.name}"] td.name`);
  await page.waitForSelector(`#view-flame:not([hidden]) #flamebox g.fr[data-name="${want.top.name}"]`);
  const hl = await page.locator(`#flamebox g.fr[data-name="${want.top.name}"] rect`).first().getAttribute("fill");
  check(hl === "#d63adf", `Top row click: ${want.top.name} highlighted in the flame graph`, hl);
  await page.fill("#flame-search", "");
  const names = await page.locator("#flamebox g.fr").evaluateAll((gs) => gs.map((g) => g.dataset.name));
  for (const f of want.flame.frames) check(names.includes(f), "Flame: frame " + f, names.join(","));
  const width = async (n) => Number(await page.locator(`#flamebox g.fr[data-name="${n}"] rect`).first().getAttribute("width"));
  const share = (await width(want.top.name)) / (await width("all"));
  check(Math.abs(share * 100 - want.top.flat_pct_num) < 1,
        `Flame: ${want.top.name} is ${want.top.flat_pct} of the width`, (share * 100).toFixed(2));
  // Clicking a frame zooms: it becomes the full width.
  await page.locator(`#flamebox g.fr[data-name="${want.top.name}"]`).first().click();
  await page.waitForFunction((n) => {
    const r = document.querySelector(`#flamebox g.fr[data-name="${n}"] rect`);
    const all = document.querySelector('#flamebox g.fr[data-name="all"] rect');
    return r && all && Math.abs(r.getAttribute("width") - all.getAttribute("width")) < 1;
  }, want.top.name);
  check(true, "Flame: click zooms into " + want.top.name);
  await page.click("#flame-reset");
  await page.screenshot({ path: shots + "-flame.png", fullPage: true });

  // Series: one live-heap point per profile with its inuse total, RSS from the profiles'
  // accounting.
  await page.click('#tabs button[data-tab="series"]');
  await page.waitForSelector("circle.pt-inuse");
  const heap = await page.locator("circle.pt-inuse").evaluateAll((cs) => cs.map((c) => +c.dataset.value));
  check(JSON.stringify(heap) === JSON.stringify(want.series.inuse), "Series: live heap points",
        JSON.stringify(heap) + " want " + JSON.stringify(want.series.inuse));
  const rss = await page.locator("circle.pt-rss").evaluateAll((cs) => cs.map((c) => +c.dataset.value));
  check(JSON.stringify(rss) === JSON.stringify(want.series.rss), "Series: RSS points",
        JSON.stringify(rss) + " want " + JSON.stringify(want.series.rss));
  await page.screenshot({ path: shots + "-series.png", fullPage: true });

  // Suspects: real results, or clearly marked pending; never made up.
  await page.click('#tabs button[data-tab="suspects"]');
  await page.waitForSelector("#suspects > *");
  const sus = await page.locator("#suspects").innerText();
  if (want.suspects && want.suspects.site) {
    const cells = await rowCells(page, "#suspects-table", want.suspects.site);
    check(cells[0] === want.suspects.verdict,
          `Suspects: ${want.suspects.site} judged "${want.suspects.verdict}" as in heapsift suspects`,
          cells[0]);
    check(cells[2] === want.suspects.growth,
          `Suspects: ${want.suspects.site} growth ${want.suspects.growth}`, cells[2]);
    const firstRow = await page.locator("#suspects-table tbody tr").first().getAttribute("data-name");
    check(firstRow === want.suspects.site, "Suspects: ranked first", firstRow);
    const mixed = await page.locator("#suspects-processes").count() ?
      await page.locator("#suspects-processes").innerText() : "";
    check(want.suspects.processes > 1 ? mixed.includes(want.suspects.processes + " processes")
                                      : mixed === "",
          `Suspects: profiles from ${want.suspects.processes} process(es) said`, mixed);
  } else {
    check(/pending/i.test(sus) && (await page.locator("#suspects-pending").count()) === 1,
          "Suspects: marked pending", sus);
  }
  await page.screenshot({ path: shots + "-suspects.png", fullPage: true });

  // The download link gives the profile itself (checked by the shell script's readers).
  await page.click('#tabs button[data-tab="top"]');
  const href = await page.locator("#download").getAttribute("href");
  const raw = await page.evaluate(async (h) => {
    const r = await fetch(h);
    return Array.from(new Uint8Array(await r.arrayBuffer()).slice(0, 2));
  }, href);
  check(raw[0] === 0x1f && raw[1] === 0x8b, "Top: download link serves a gzipped profile",
        JSON.stringify(raw));

  // A new dump in the directory is picked up at the next poll; B follows the newest.
  if (want.new_src) {
    copyFileSync(want.new_src, want.new_dst + ".tmp.1"); // skipped by the poller until renamed
    renameSync(want.new_dst + ".tmp.1", want.new_dst);
    await page.waitForFunction((n) => document.querySelectorAll("#profB option").length === n,
                               3, { timeout: 30000 });
    const selB = await page.locator("#profB option:checked").innerText();
    check(selB.includes(want.new_label), "poll: new dump listed and chosen as B", selB);
  }

  // The unreachable target: its error is shown, not fatal.
  await page.selectOption("#target", String(want.bad_target));
  await page.waitForSelector("#target-error");
  const err = await page.locator("#target-error").innerText();
  check(/connect/i.test(err), "unreachable target: error shown", err);
  await page.screenshot({ path: shots + "-error.png", fullPage: true });

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
