// bench/webpaint.mjs: time from navigation to first paint of views in headless Chromium,
// run by bench/webpaint.sh. For each run, each view is opened in a fresh browser context
// (no cache), and timed from the navigation's start (performance.timeOrigin) until its
// content is in the DOM and one requestAnimationFrame has run after that (the frame that
// paints it). Runs are interleaved: run 1 of every view, then run 2, and so on.
//
// usage: node webpaint.mjs RUNS NAME=URL=SELECTOR...
// (SELECTOR: a CSS selector the view's content matches; "load" waits for the load event.)
// Prints one line per view: NAME median min max (ms), and every run's figure.
import { createRequire } from "node:module";

const require = createRequire(process.env.HS_WEB_MODULES + "/");
const { chromium } = require("playwright-core");
const [runs, ...specs] = process.argv.slice(2);
const views = specs.map((s) => { const [name, url, sel] = s.split("="); return { name, url, sel, t: [] }; });

const browser = await chromium.launch({
  executablePath: process.env.HS_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  for (let r = 0; r < +runs; r++) {
    for (const v of views) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const page = await ctx.newPage();
      page.setDefaultTimeout(120000);
      await page.goto(v.url, { waitUntil: v.sel === "load" ? "load" : "commit" });
      if (v.sel !== "load") await page.waitForSelector(v.sel, { state: "attached", timeout: 120000 });
      const ms = await page.evaluate(() => new Promise((res) =>
        requestAnimationFrame(() => res(performance.now()))));
      v.t.push(ms);
      await ctx.close();
    }
  }
} finally {
  await browser.close();
}
for (const v of views) {
  const s = [...v.t].sort((a, b) => a - b);
  console.log([v.name, s[s.length >> 1], s[0], s[s.length - 1]].map((x) => typeof x === "number" ? x.toFixed(0) : x)
    .join(" ") + " | " + v.t.map((x) => x.toFixed(0)).join(" "));
}
