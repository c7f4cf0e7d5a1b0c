// The `heapsift web` page over a live process (tests/integration/web_live.sh): a program
// leaking at a known site serves its heap with HEAPSIFT_HTTP, `heapsift web` polls it.
// The shell script fixes two profile ids of the ring (A, B) and what the page must show
// for them (from `heapsift top`/`diff` and `go tool pprof` on the same stored profiles,
// downloaded from /api/raw).
//
// usage: node web_live.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Prints "N passed, N failed" and exits 1 on any failure.
import { readFileSync } from "node:fs";
import { check, openPage, rowCells, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors } = ctx;

// The page writes every byte figure in its one unit (that of the largest live heap or
// RSS), go tool pprof and heapsift in their own (that of the smallest row, which depends
// on sampling): two figures are the same value when they agree to the rounding of both.
const UNITS = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };
function sameFigure(x, y) {
  const parse = (s) => {
    const m = /^([-+]?[0-9.]+)([A-Za-z]*)$/.exec(s.trim());
    return m ? { v: parseFloat(m[1]) * (UNITS[m[2]] || 1), u: UNITS[m[2]] || 1 } : null;
  };
  const a = parse(x), b = parse(y);
  return !!a && !!b && Math.abs(a.v - b.v) <= 0.005 * (a.u + b.u) + 1e-9;
}

await run(ctx, shots, async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="top"]'); // the page opens on the Diagnosis
  await page.waitForSelector("#top-table tbody tr");
  await page.selectOption("#profA", String(want.a));
  await page.selectOption("#profB", String(want.b));
  await page.waitForFunction((b) => document.querySelector("#top-summary").textContent
                                      .includes("Profile B #" + b), want.b);
  const first = await page.locator("#top-table tbody tr").first().locator("td").allInnerTexts();
  check(first[6] === want.top.name && sameFigure(first[0], want.top.flat),
        `Top of B: ${want.top.name} ${want.top.flat} as go tool pprof reads the stored profile`,
        first[6] + " " + first[0]);
  const leak = await rowCells(page, "#top-table", want.leak);
  check(sameFigure(leak[3], want.leak_cum), `Top of B: ${want.leak} cum ${want.leak_cum}`, leak[3]);
  await page.screenshot({ path: shots + "-top.png", fullPage: true });

  await page.click('#tabs button[data-tab="diff"]');
  const d = await rowCells(page, "#diff-table", want.leak);
  check(d[3].startsWith("+") && sameFigure(d[3], want.diff_cum) && d[5] === "grew",
        `Diff A→B: ${want.leak} cum +${want.diff_cum} grew, as heapsift diff says`, d.join(" | "));
  await page.screenshot({ path: shots + "-diff.png", fullPage: true });

  await page.click('#tabs button[data-tab="series"]');
  await page.waitForSelector("circle.pt-rss");
  const rss = await page.locator("circle.pt-rss").count();
  const heap = await page.locator("circle.pt-inuse").count();
  check(rss >= want.min_profiles && rss === heap, "Series: an RSS point per live-heap point", rss + "/" + heap);
  const note = await page.locator("#series-note").innerText();
  check(note.includes("/debug/heapsift/stats"), "Series: RSS from the endpoint's stats", note);
  const heapVals = await page.locator("circle.pt-inuse").evaluateAll((cs) => cs.map((c) => +c.dataset.value));
  check(heapVals[heapVals.length - 1] > heapVals[0], "Series: live heap rises", JSON.stringify(heapVals));
  await page.screenshot({ path: shots + "-series.png", fullPage: true });

  await page.click('#tabs button[data-tab="suspects"]');
  await page.waitForSelector("#suspects-table tbody tr");
  // Stacks are leaf first: site_leak allocates through block().
  const rows = await page.locator("#suspects-table tbody tr").evaluateAll((trs) =>
    trs.map((tr) => [tr.cells[0].textContent, tr.cells[tr.cells.length - 1].textContent]));
  check(rows.length && rows[0][0] === "growing" && rows[0][1].includes("< " + want.leak + " <"),
        `Suspects: the ${want.leak} stack ranked first, growing`, JSON.stringify(rows[0]));
  const flat = rows.find((r) => r[1].includes("< " + want.flat + " <"));
  check(!flat || flat[0] !== "growing", `Suspects: ${want.flat} not growing`, JSON.stringify(flat));
  check((await page.locator("#suspects-processes").count()) === 0,
        "Suspects: one process's profiles, no note of several", "");
  await page.screenshot({ path: shots + "-suspects.png", fullPage: true });
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
