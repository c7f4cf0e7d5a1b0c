// What the browser tests share (web_ui.mjs, web_live.mjs): the check counter and its
// closing "N passed, N failed" line, the headless Chromium launch (Debian's binary, no
// background traffic), the page with its error and request logs, a table row's cells,
// and the run wrapper that screenshots a failure and always closes the browser.
import { chromium } from "playwright-core";

let passed = 0, failed = 0;

export function check(ok, what, detail) {
  if (ok) {
    passed++;
    console.log("ok   " + what);
  } else {
    failed++;
    console.log("FAIL " + what + (detail !== undefined ? ": " + detail : ""));
  }
}

// Launches Chromium and opens a page; pageErrors gets uncaught exceptions and console
// errors (with the URL they name), requests every URL the page asked for.
export async function openPage() {
  const browser = await chromium.launch({
    executablePath: process.env.HS_CHROMIUM || "/usr/bin/chromium",
    // No connection leaves the machine: Chromium's own background traffic is off too.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const pageErrors = [], requests = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => {
    const at = m.location().url; // a failed load's: the resource
    if (m.type() === "error") pageErrors.push(m.text() + (at ? " (" + at + ")" : ""));
  });
  page.on("request", (r) => requests.push(r.url()));
  page.setDefaultTimeout(30000);
  return { browser, page, pageErrors, requests };
}

// Text of the cells of the row of table whose name cell is name.
export async function rowCells(page, table, name) {
  const row = page.locator(`${table} tbody tr[data-name="${name}"]`).first();
  await row.waitFor();
  return row.locator("td").allInnerTexts();
}

// Runs flow(), counts an exception as a failed check (with a screenshot), closes the
// browser, prints the totals and exits 1 on any failure.
export async function run(ctx, shots, flow) {
  try {
    await flow();
  } catch (e) {
    check(false, "page flow", e.stack || e.message);
    await ctx.page.screenshot({ path: shots + "-failure.png", fullPage: true }).catch(() => {});
  } finally {
    await ctx.browser.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
