// The bottom-up (callers) tree of the `heapsift web` page's Flame tab in headless Chromium:
// run by tests/integration/web_bottomup.sh over a profile of tests/programs/tracked, with
// take's flat (heapsift top) and comp_shared's callers and their bytes (go tool pprof
// -peek) in a JSON file.
//
// usage: node web_bottomup.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks: top-down, take is not a first-level frame; a click on "Bottom-up (callers)"
// makes it one, with heapsift top's flat; clicking take, then comp_shared under it, shows
// comp_shared's callers below with pprof -peek's bytes; the URL keeps the bottom-up view
// across a reload; "Top-down (callees)" goes back. Prints "N passed, N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const callers = Object.fromEntries(want.callers.split(",").map((kv) => kv.split("=")));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

// The frames drawn: name, depth (rows of 18 px), the figure of the tooltip.
const frames = () => page.locator("#flamebox g.fr").evaluateAll((gs) => gs.map((g) => ({
  name: g.dataset.name, depth: Math.round(+g.querySelector("rect").getAttribute("y") / 18),
  fig: (/ — (\S+) \(/.exec(g.querySelector("title").textContent) || [])[1] })));
const TAKE = "take"; // heapsift top names it "take (inline)", the flame graph "take"

await run(ctx, shots, async () => {
  await page.goto(url + "#flame");
  await page.waitForSelector("#view-flame:not([hidden]) #flamebox g.fr");
  let fs = await frames();
  check(!fs.some((f) => f.depth === 1 && f.name === TAKE), "top-down: take is no first-level frame",
        fs.filter((f) => f.depth === 1).map((f) => f.name).join(","));

  await page.click("#flame-invert");
  await page.waitForFunction(() => document.querySelector("#flame-invert").textContent === "Top-down (callees)" &&
    /bottom-up/.test(document.querySelector("#flame-summary").textContent));
  await page.waitForSelector(`#flamebox g.fr[data-name="${TAKE}"] rect[y="18"]`);
  fs = await frames();
  const take = fs.find((f) => f.depth === 1 && f.name === TAKE);
  check(take && take.fig === want.take, `bottom-up: take is a first-level frame with heapsift top's flat ${want.take}`,
        JSON.stringify(take));
  await page.screenshot({ path: shots + "-bottomup.png", fullPage: true });

  // Zoom into take, then into comp_shared (one of take's callers).
  await page.click(`#flamebox g.fr[data-name="${TAKE}"] rect[y="18"]`);
  // A zoomed frame's ancestors are drawn faded.
  await page.waitForSelector('#flamebox g.fr[data-name="all"] rect[y="0"][opacity="0.6"]');
  fs = await frames();
  check(fs.some((f) => f.depth === 2 && f.name === "comp_shared"), "bottom-up: comp_shared calls take",
        fs.filter((f) => f.depth === 2).map((f) => f.name).join(","));
  await page.click('#flamebox g.fr[data-name="comp_shared"] rect[y="36"]');
  await page.waitForSelector(`#flamebox g.fr[data-name="${TAKE}"] rect[y="18"][opacity="0.6"]`);
  fs = await frames();
  const got = Object.fromEntries(fs.filter((f) => f.depth === 3).map((f) => [f.name, f.fig]));
  check(JSON.stringify(Object.keys(got).sort()) === JSON.stringify(Object.keys(callers).sort()) &&
        Object.keys(callers).every((k) => got[k] === callers[k]),
        "bottom-up: comp_shared's callers with go tool pprof -peek's bytes",
        JSON.stringify(got) + " want " + JSON.stringify(callers));
  await page.screenshot({ path: shots + "-callers.png", fullPage: true });

  // The URL keeps it: a reload is bottom-up again.
  check(page.url().includes("flame=callers"), "URL: flame=callers", page.url());
  await page.reload();
  await page.waitForSelector(`#flamebox g.fr[data-name="${TAKE}"] rect[y="18"]`);
  check(await page.locator("#flame-invert").textContent() === "Top-down (callees)", "reload: still bottom-up");

  // Back to top-down.
  await page.click("#flame-invert");
  await page.waitForFunction(() => document.querySelector("#flame-invert").textContent === "Bottom-up (callers)");
  await page.waitForFunction(() => !/bottom-up/.test(document.querySelector("#flame-summary").textContent));
  fs = await frames();
  check(!fs.some((f) => f.depth === 1 && f.name === TAKE) && fs.some((f) => f.depth === 1),
        "Top-down (callees): the callers on top again", fs.filter((f) => f.depth === 1).map((f) => f.name).join(","));
  check(!page.url().includes("flame=callers"), "URL: top-down has no flame=callers", page.url());

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
