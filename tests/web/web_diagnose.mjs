// The Diagnosis tab of the `heapsift web` page, in headless Chromium with real clicks: run
// by tests/integration/web_diagnose.sh, which starts `heapsift web` over one profile
// (target 0) and a directory of a series of dumps (target 1), and names in a JSON file the
// output of `heapsift diagnose --json` for each.
//
// usage: node web_diagnose.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks: the Diagnosis tab is the first tab and the one shown on load; its cards (kind,
// exact bytes, site, readable bytes) are the CLI's findings in the CLI's order, largest
// first, and its notes the CLI's; a click on Top shows Top and hides the cards, a click on
// Diagnosis shows them again; the series target's cards are the CLI's over the directory,
// with a growth finding; answers no profile gives (routed by the test): no findings said
// plainly, markup in the strings shown as text. Prints "N passed, N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const one = JSON.parse(readFileSync(want.one, "utf8"));
const series = JSON.parse(readFileSync(want.series, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

// The cards as the page shows them: kind (its label back to the JSON's name), the exact
// bytes read from the text beside the readable figure, the site, evidence and advice.
async function cards() {
  return page.locator("#view-diagnose .diag-finding").evaluateAll((ds) => ds.map((d) => {
    const t = (sel) => d.querySelector(sel)?.textContent ?? null;
    return { kind: t(".diag-kind").replace(/ /g, "_"),
             bytes: +t(".diag-exact").replace(/^\((\d+) bytes\)$/, "$1"),
             readable: t(".diag-bytes"), title: d.querySelector(".diag-bytes").title,
             site: d.querySelector(".diag-site") ? t(".diag-site .diag-text") : null,
             evidence: t(".diag-evidence .diag-text"), advice: t(".diag-advice .diag-text") };
  }));
}

const summary = (fs) => fs.map((f) => f.kind + " " + f.bytes).join(", ");

async function compare(j, what) {
  const got = await cards();
  const w = j.findings;
  check(got.length === w.length && summary(got) === summary(w),
        what + ": the kinds, order and bytes of heapsift diagnose --json", summary(got) + " want " + summary(w));
  check(JSON.stringify(got.map((f) => [f.site, f.evidence, f.advice])) ===
        JSON.stringify(w.map((f) => [f.site, f.evidence, f.advice])), what + ": sites, evidence and advice as text");
  const sorted = got.every((f, i) => i === 0 || got[i - 1].bytes >= f.bytes);
  check(sorted, what + ": largest first", summary(got));
  const dec = (b) => b >= 1e6 ? (b / 1e6).toFixed(2) + " MB" : b >= 1e3 ? (b / 1e3).toFixed(1) + " kB" : b + " B";
  check(got.every((f) => f.title === f.bytes + " bytes" && f.readable === dec(f.bytes)),
        what + ": readable bytes, the exact count on hover", JSON.stringify(got.map((f) => [f.readable, f.title])));
  const notes = await page.locator("#diag-notes li").allTextContents();
  check(JSON.stringify(notes) === JSON.stringify(j.notes), what + ": the notes", JSON.stringify(notes));
}

await run(ctx, shots, async () => {
  await page.goto(url);
  const first = await page.locator("#tabs button").first();
  check(await first.getAttribute("data-tab") === "diagnose" && await first.innerText() === "Diagnosis",
        "the first tab is Diagnosis");
  check(await first.evaluate((b) => b.classList.contains("on")), "the Diagnosis tab is on at load");
  await page.waitForSelector("#view-diagnose:not([hidden]) .diag-finding");
  check(await page.locator("#view-top").isHidden(), "Top is hidden at load");
  await page.waitForFunction(() => location.hash.startsWith("#diagnose"));
  await compare(one, "one profile");
  check(await page.locator("#diag-empty").count() === 0, "findings: no 'no findings' note");
  await page.screenshot({ path: shots + "-one.png", fullPage: true });

  // Another tab, then back.
  await page.click('#tabs button[data-tab="top"]');
  await page.waitForSelector("#view-top:not([hidden]) #top-table tbody tr[data-name]");
  check(await page.locator("#view-diagnose").isHidden(), "Top clicked: the Diagnosis is hidden");
  check(await page.locator('#tabs button[data-tab="top"]').evaluate((b) => b.classList.contains("on")),
        "Top clicked: its tab is on");
  await page.click('#tabs button[data-tab="diagnose"]');
  await page.waitForSelector("#view-diagnose:not([hidden]) .diag-finding");
  check(await page.locator("#view-top").isHidden(), "Diagnosis clicked again: Top is hidden");
  await page.waitForFunction(() => document.body.dataset.rendered.startsWith("diagnose:"));
  await compare(one, "one profile, clicked again");

  // The series: the whole directory, oldest first, as the CLI over the directory.
  await page.selectOption("#target", "1");
  await page.waitForFunction((n) => document.querySelector("#diag-summary")?.textContent
    .includes("its " + n + " kept profiles"), want.dumps);
  await page.waitForSelector('#view-diagnose .diag-finding[data-kind="growth"]');
  await compare(series, "the series of " + want.dumps + " dumps");
  const growth = (await cards()).filter((f) => f.kind === "growth" && /site_leak/.test(f.site));
  check(growth.length === 1, "the series: a growth finding at site_leak");
  await page.screenshot({ path: shots + "-series.png", fullPage: true });

  // The page's own rendering of answers no profile gives: no findings at all (said
  // plainly), and strings that would be markup (set as text, never parsed).
  const answer = (j) => page.route("**/api/diagnose?*", (r) => r.fulfill({
    status: 200, contentType: "application/json", body: JSON.stringify(j) }));
  const redraw = async () => {
    await page.click('#tabs button[data-tab="top"]');
    await page.waitForSelector("#view-top:not([hidden])");
    await page.click('#tabs button[data-tab="diagnose"]');
    await page.waitForFunction(() => document.body.dataset.rendered.startsWith("diagnose:"));
  };
  await answer({ target: "t", rss_bytes: null, allocator: "unknown", findings: [], notes: [] });
  await redraw();
  await page.waitForSelector("#diag-empty");
  check(await page.locator("#view-diagnose .diag-finding").count() === 0 &&
        /^No findings/.test(await page.locator("#diag-empty").innerText()), "no findings: said plainly");
  await page.unroute("**/api/diagnose?*");
  const evil = "<img src=x onerror=\"document.body.dataset.pwned=1\">";
  await answer({ target: evil, rss_bytes: 5, allocator: "glibc", notes: [evil],
                 findings: [{ kind: "leak", bytes: 999, site: evil, evidence: evil, advice: evil }] });
  await redraw();
  await page.waitForSelector('#view-diagnose .diag-finding[data-kind="leak"]');
  const c = await cards();
  check(c.length === 1 && c[0].site === evil && c[0].evidence === evil && c[0].readable === "999 B" &&
        await page.locator("#view-diagnose img").count() === 0 &&
        await page.evaluate(() => !document.body.dataset.pwned), "markup in strings is shown as text",
        JSON.stringify(c));
  await page.unroute("**/api/diagnose?*");

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no page errors", pageErrors.join(" | "));
});
