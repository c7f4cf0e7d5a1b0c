// The Series chart of the `heapsift web` page in headless Chromium: run by
// tests/integration/web_series.sh, which starts `heapsift web` over three profiles and
// writes each one's id, live heap in bytes (go tool pprof -raw) and `heapsift top --unit
// UNIT`'s total into a JSON file.
//
// usage: node web_series.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks: the value axis's labels are round values of the page's unit (0, then equal steps
// of 1, 2 or 5 times a power of ten), three to eight of them, the top one above every
// point; each live heap point has the profile's live heap and is drawn where the axis puts
// that value (within a pixel and a half); clicking each point makes it profile B, and the
// Top tab's total is then heapsift top's for that profile. Prints "N passed, N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;
const U = want.unit, UNITS = ["B", "kB", "MB", "GB", "TB", "PB"];
const scale = 1024 ** UNITS.indexOf(U);

await run(ctx, shots, async () => {
  await page.goto(url + "#series");
  await page.waitForSelector("#view-series:not([hidden]) #series-box circle.pt-inuse");
  const ticks = await page.locator("#series-box text.ytick").evaluateAll((ts) =>
    ts.map((t) => ({ label: t.textContent, y: +t.getAttribute("y") })));
  const nums = ticks.map((t) => t.label === "0" ? 0 : t.label.endsWith(U) ? +t.label.slice(0, -U.length) : NaN);
  const step = nums[1] - nums[0];
  const mant = step / 10 ** Math.floor(Math.log10(step));
  const even = nums.every((v, i) => Math.abs(v - i * step) < 1e-9 * Math.max(1, step));
  const points = await page.locator("#series-box circle").evaluateAll((cs) =>
    cs.map((c) => ({ id: +c.dataset.id, key: c.getAttribute("class"), v: +c.dataset.value, cy: +c.getAttribute("cy") })));
  const maxv = Math.max(...points.map((p) => p.v)) / scale;
  check(nums[0] === 0 && even && [1, 2, 5].some((k) => Math.abs(mant - k) < 1e-9) &&
        nums.length >= 3 && nums.length <= 8 && nums[nums.length - 1] > maxv,
        `Series: axis ticks at round values in ${U}`, ticks.map((t) => t.label).join(" ") + " (max " + maxv + ")");
  // The axis's map from value to y, from its first and last ticks (text y = line y + 4).
  const [t0, t1] = [ticks[0], ticks[ticks.length - 1]];
  const yOf = (bytes) => t0.y - 4 + (bytes / scale - nums[0]) / (nums[nums.length - 1] - nums[0]) * (t1.y - t0.y);
  for (const w of want.points) {
    const p = points.find((q) => q.key === "pt-inuse" && q.id === w.id);
    check(p && p.v === w.heap, `Series: #${w.id}'s live heap is go tool pprof's ${w.heap}`, p && p.v);
    check(p && Math.abs(p.cy - yOf(w.heap)) < 1.5, `Series: #${w.id}'s point is where the axis puts it`,
          p && p.cy + " vs " + yOf(w.heap));
  }
  await page.screenshot({ path: shots + "-series.png", fullPage: true });

  // Click each point, then look at Top: its total is that profile's.
  for (const w of want.points) {
    await page.click('#tabs button[data-tab="series"]');
    await page.locator(`#series-box circle.pt-inuse[data-id="${w.id}"]`).click();
    await page.waitForFunction((id) => document.querySelector("#profB").value === String(id), w.id);
    await page.click('#tabs button[data-tab="top"]');
    await page.waitForFunction((id) => document.querySelector("#top-summary").textContent
      .startsWith("Profile B #" + id + " "), w.id);
    const sum = await page.locator("#top-summary").innerText();
    check(sum.includes("total " + w.total + " "), `clicked #${w.id}: Top's total is heapsift top's ${w.total}`, sum);
  }

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
