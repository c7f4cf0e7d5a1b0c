// The accounting of the `heapsift web` page is `heapsift stats`' table, in headless
// Chromium: run by tests/integration/web_stats.sh, which starts `heapsift web` over a
// directory of two heapsift profiles (A older, B newer) and a Go heap profile, and writes
// the output of `heapsift stats` for A and B into files named in a JSON file.
//
// usage: node web_stats.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Each table row is put back into the columns heapsift stats prints (the label indented
// in 44 columns, the figure right-aligned in 12, two spaces, the note), each spanning row
// as its text; they must be heapsift stats' lines after its header line, in order, and the
// header must say the same after its file name. Checks: B's table on the Series tab; a
// shift-click on A's point leaves B; a click on it makes A profile B and the table is A's;
// the Go target says it has no accounting. Prints "N passed, N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

// heapsift stats' output: the header after its "NAME: " and the other non-empty lines
// (spanning lines trimmed, as the page shows them).
function statsLines(file) {
  const lines = readFileSync(file, "utf8").split("\n");
  const head = lines.shift();
  const rows = lines.filter((l) => l.trim()).map((l) => /^ *\(|^exact |^reach: /.test(l) ? l.trim() : l);
  return { head: head.slice(head.lastIndexOf(": kind ")), rows };
}

const pad = (s, n) => s + " ".repeat(Math.max(0, n - s.length));
const padl = (s, n) => " ".repeat(Math.max(0, n - s.length)) + s;
async function pageLines() {
  const rows = await page.locator("#acct tbody tr").evaluateAll((trs) =>
    trs.map((tr) => [tr.className, ...[...tr.cells].map((td) => td.textContent)]));
  return rows.map(([cls, a, fig, note]) => cls === "line" ? a
    : pad(a, 44) + " " + padl(fig, 12) + (note ? "  " + note : ""));
}

async function compare(file, what) {
  const w = statsLines(file);
  const got = await pageLines();
  check(got.length > 8 && JSON.stringify(got) === JSON.stringify(w.rows),
        what + ": the rows of heapsift stats", "\n" + got.join("\n") + "\nwant\n" + w.rows.join("\n"));
  const head = await page.locator("#acct-head").innerText();
  check(head.endsWith(w.head), what + ": the header of heapsift stats", head + " want …" + w.head);
  const cells = await page.locator("#acct tbody tr.row td.fig").count();
  check(cells >= 8, what + ": a table (" + cells + " figure cells), not comment text");
}

await run(ctx, shots, async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="top"]'); // the page opens on the Diagnosis
  await page.waitForSelector("#top-table tbody tr[data-name]");
  await page.click('#tabs button[data-tab="series"]');
  await page.waitForSelector("#view-series:not([hidden]) #acct:not([hidden]) tbody tr.row");
  await compare(want.b_stats, "B (#" + want.b + ")");
  const live = await page.locator("#acct tbody tr.row", { hasText: "live heap (sampled estimate)" }).count();
  check(live === 1, "the live heap row is a row of the table");
  await page.screenshot({ path: shots + "-b.png", fullPage: true });

  // Shift-click A's point: A is chosen as the base, B's accounting stays.
  const ptA = page.locator(`#series-box circle.pt-inuse[data-id="${want.a}"]`);
  await ptA.click({ modifiers: ["Shift"] });
  await page.waitForFunction((a) => document.querySelector("#profA").value === String(a), want.a);
  await compare(want.b_stats, "after a shift-click on A, still B");
  // Click A's point: it becomes profile B, the table follows.
  await page.locator(`#series-box circle.pt-inuse[data-id="${want.a}"]`).click();
  await page.waitForFunction((a) => document.querySelector("#profB").value === String(a), want.a);
  await page.waitForFunction((a) => document.querySelector("#acct-head").textContent.length > 0 &&
    location.hash.includes("b=" + a), want.a);
  await page.waitForFunction(() => document.body.dataset.rendered.startsWith("series:"));
  await compare(want.a_stats, "A (#" + want.a + ") clicked in the series");
  await page.screenshot({ path: shots + "-a.png", fullPage: true });

  // The Go profile's target: no accounting, said plainly.
  await page.selectOption("#target", "1");
  await page.waitForFunction(() => /carries no accounting/.test(document.querySelector("#acct-head").textContent));
  check(await page.locator("#acct").isHidden(), "Go profile: no table, a note that it has no accounting");
  await page.screenshot({ path: shots + "-go.png", fullPage: true });

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
