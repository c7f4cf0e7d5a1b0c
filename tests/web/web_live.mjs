// The `heapsift web` page over a live process (tests/integration/web_live.sh): a program
// leaking at a known site serves its heap with HEAPSIFT_HTTP, `heapsift web` polls it.
// The shell script fixes two profile ids of the ring (A, B) and what the page must show
// for them (from `heapsift top`/`diff` and `go tool pprof` on the same stored profiles,
// downloaded from /api/raw).
//
// usage: node web_live.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Prints "N passed, N failed" and exits 1 on any failure.
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
let passed = 0, failed = 0;

function check(ok, what, detail) {
  if (ok) {
    passed++;
    console.log("ok   " + what);
  } else {
    failed++;
    console.log("FAIL " + what + (detail !== undefined ? ": " + detail : ""));
  }
}

const browser = await chromium.launch({
  executablePath: process.env.HS_CHROMIUM || "/usr/bin/chromium",
  // No connection leaves the machine: Chromium's own background traffic is off too.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(e.message));
page.setDefaultTimeout(30000);

async function rowCells(table, name) {
  const row = page.locator(`${table} tbody tr[data-name="${name}"]`).first();
  await row.waitFor();
  return row.locator("td").allInnerTexts();
}

try {
  await page.goto(url);
  await page.waitForSelector("#top-table tbody tr");
  await page.selectOption("#profA", String(want.a));
  await page.selectOption("#profB", String(want.b));
  await page.waitForFunction((b) => document.querySelector("#top-summary").textContent
                                      .includes("Profile B #" + b), want.b);
  const first = await page.locator("#top-table tbody tr").first().locator("td").allInnerTexts();
  check(first[6] === want.top.name && first[0] === want.top.flat,
        `Top of B: ${want.top.name} ${want.top.flat} as go tool pprof reads the stored profile`,
        first[6] + " " + first[0]);
  const leak = await rowCells("#top-table", want.leak);
  check(leak[3] === want.leak_cum, `Top of B: ${want.leak} cum ${want.leak_cum}`, leak[3]);
  await page.screenshot({ path: shots + "-top.png", fullPage: true });

  await page.click('#tabs button[data-tab="diff"]');
  const d = await rowCells("#diff-table", want.leak);
  check(d[3] === "+" + want.diff_cum && d[5] === "grew",
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
  await page.screenshot({ path: shots + "-suspects.png", fullPage: true });
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
} catch (e) {
  check(false, "page flow", e.stack || e.message);
  await page.screenshot({ path: shots + "-failure.png", fullPage: true }).catch(() => {});
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
