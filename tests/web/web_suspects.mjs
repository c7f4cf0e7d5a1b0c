// The web UI's Suspects tab on profiles labelled reachable=yes|no (issue 28), driven as a
// user would: open the page, click the Suspects tab, read the table. Checks against
// `heapsift suspects --json` over the same profiles (want.json, written by
// tests/integration/web_suspects_reach.sh): the summary says how many stacks hold
// unreachable objects, the unreachable stacks come first and are marked, the first
// one's "lost N" cell is the CLI's unreachable bytes, and a reachable stack shows "-".
// usage: node web_suspects.mjs URL WANT.json SHOTS_PREFIX
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, wantPath, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(wantPath, "utf8"));
const ctx = await openPage();
const { page, pageErrors } = ctx;

await run(ctx, shots, async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="suspects"]');
  await page.waitForSelector("#suspects-table tbody tr");
  const summary = await page.locator("#suspects-unreachable").innerText();
  check(summary.startsWith(want.unreachable + " hold objects no pointer reaches"),
        `Suspects: the summary counts ${want.unreachable} stacks with unreachable objects`,
        summary);
  const rows = page.locator("#suspects-table tbody tr");
  const n = await rows.count();
  const marks = [];
  for (let i = 0; i < n; i++)
    marks.push(await rows.nth(i).getAttribute("data-unreachable"));
  const firstReachable = marks.indexOf("0");
  check(marks.slice(0, want.unreachable).every((m) => m === "1") &&
        (firstReachable < 0 || firstReachable === want.unreachable),
        `Suspects: the ${want.unreachable} unreachable stacks rank first`, marks.join(""));
  const first = rows.first();
  check((await first.getAttribute("data-name")) === want.first_leaf,
        `Suspects: ${want.first_leaf} first, as heapsift suspects ranks it`,
        await first.getAttribute("data-name"));
  const cell = await first.locator("td.unreach").innerText();
  const m = /^lost ([0-9.]+)\s*(B|kB|MB|GB)$/.exec(cell);
  const scale = { B: 1, kB: 1024, MB: 1024 * 1024, GB: 1024 * 1024 * 1024 };
  const bytes = m ? parseFloat(m[1]) * scale[m[2]] : NaN;
  check(Math.abs(bytes - want.first_bytes) <= 0.01 * want.first_bytes,
        `Suspects: its cell says it lost ${want.first_bytes} bytes, as heapsift suspects does`, cell);
  if (firstReachable >= 0) {
    const other = await rows.nth(firstReachable).locator("td.unreach").innerText();
    check(other === "-", "Suspects: a reachable stack's cell is \"-\"", other);
  }
  await page.screenshot({ path: shots + "-suspects-reach.png", fullPage: true });
  check(pageErrors.length === 0, "no page errors", pageErrors.join(" | "));
});
