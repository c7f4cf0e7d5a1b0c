// One unit per page, in headless Chromium: run by tests/integration/web_units.sh, which
// starts `heapsift web` over one profile whose `heapsift top` says kB while its live heap
// and RSS read in MB, and writes what the page must show (from `heapsift top`, `graph` and
// `list` with --unit UNIT, UNIT the page's) into a JSON file.
//
// usage: node web_units.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks, clicking as a person would: the Top table's rows are heapsift top --unit UNIT's;
// a click on site_steady's row opens the Flame tab, whose frame (hovered) gives the same
// figure in the same unit; the Graph's box for site_steady says heapsift graph's figure;
// the Source of site_steady is heapsift list --unit UNIT's; the Series' live heap point
// is the profile's total in UNIT, and every RSS figure uses UNIT too. Prints "N passed,
// N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const listing = readFileSync(want.list, "utf8");
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;
const U = want.unit;
// A byte figure in the page's unit: a number and U, or a plain 0.
const inUnit = (s) => s === "0" || new RegExp("^-?[0-9]+(\\.[0-9]+)?" + U + "$").test(s);

await run(ctx, shots, async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="top"]'); // the page opens on the Diagnosis
  await page.waitForSelector("#top-table tbody tr[data-name]");
  const rows = await page.locator("#top-table tbody tr[data-name]").evaluateAll((trs) =>
    trs.map((tr) => { const c = [...tr.cells].map((td) => td.textContent.trim());
                      return [c[0], c[1], c[2], c[3], c[4], c[6]]; }));
  check(JSON.stringify(rows) === JSON.stringify(want.rows),
        `Top: the rows of heapsift top --unit ${U}`, JSON.stringify(rows) + " want " + JSON.stringify(want.rows));
  const figures = rows.flatMap((r) => [r[0], r[3]]);
  check(figures.every(inUnit), `Top: every figure in ${U}`, figures.join(" "));
  const summary = await page.locator("#top-summary").innerText();
  check(summary.includes("total " + want.total), "Top: the total in " + U, summary);
  await page.screenshot({ path: shots + "-top.png", fullPage: true });
  const steady = want.rows.find((r) => r[5] === "site_steady");

  // Click site_steady's row: the flame graph, its frame hovered.
  await page.click('#top-table tbody tr[data-name="site_steady"] td.name');
  await page.waitForSelector('#view-flame:not([hidden]) #flamebox g.fr[data-name="site_steady"]');
  await page.hover('#flamebox g.fr[data-name="site_steady"] rect');
  await page.waitForFunction(() => document.querySelector("#flame-details").textContent.startsWith("site_steady"));
  const tip = await page.locator("#flame-details").innerText();
  const m = /^site_steady — (\S+) \(/.exec(tip);
  check(m && m[1] === steady[3], `Flame: site_steady's tooltip says top's cum ${steady[3]}`, tip);
  const fsum = await page.locator("#flame-summary").innerText();
  check(fsum.includes("total " + want.total), "Flame: the total in " + U, fsum);
  await page.screenshot({ path: shots + "-flame.png", fullPage: true });

  // The Graph: site_steady's box.
  await page.click('#tabs button[data-tab="graph"]');
  await page.waitForSelector('#graphbox g.node[data-name="site_steady"]');
  const box = await page.locator('#graphbox g.node[data-name="site_steady"]').evaluate((g) =>
    [...g.querySelectorAll("text")].map((t) => t.textContent).join(" "));
  check(box.includes(want.graph_steady) && want.graph_steady === steady[0],
        `Graph: site_steady's box says ${steady[0]} (heapsift graph --unit ${U})`, box);

  // The Source of site_steady, typed in.
  await page.click('#tabs button[data-tab="source"]');
  await page.fill("#source-fn", "^site_steady$");
  await page.click("#source-go");
  await page.waitForSelector("#source-text:not([hidden])");
  const text = await page.locator("#source-text").evaluate((p) => p.textContent);
  check(text === listing, `Source: heapsift list --unit ${U}'s text`, JSON.stringify(text.slice(0, 300)));

  // The Series: the live heap point is the total; RSS figures in the same unit.
  await page.click('#tabs button[data-tab="series"]');
  await page.waitForSelector("#series-box circle.pt-inuse");
  const heapTip = await page.locator("#series-box circle.pt-inuse title").first().textContent();
  // "... live heap 22.10MB (95%: 21.62MB..22.58MB)": the interval in the unit too.
  const ci = (heapTip.match(/\(95%: (\S+)\.\.(\S+)\)$/) || []).slice(1);
  check((heapTip.match(/live heap (\S+)/) || [])[1] === want.total && ci.length === 2 && ci.every(inUnit),
        "Series: the live heap point says " + want.total, heapTip);
  const rssTips = await page.locator("#series-box circle.pt-rss title").allTextContents();
  const rssFig = rssTips.map((t) => t.split("RSS ")[1]);
  check(rssFig.length > 0 && rssFig.every(inUnit), "Series: RSS in " + U, rssTips.join(" | "));
  const axis = await page.locator("#series-box svg text").allTextContents();
  const yl = axis.filter((t) => /B$|^0$/.test(t));
  check(yl.length >= 2 && yl.every(inUnit), "Series: the axis in " + U, yl.join(" "));
  const note = await page.locator("#series-note").innerText();
  check(note.includes("live heap " + want.total + ","), "Series: the note in " + U, note);
  await page.screenshot({ path: shots + "-series.png", fullPage: true });

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
