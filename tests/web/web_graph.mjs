// The Graph and Source tabs of the `heapsift web` page in headless Chromium, used as a
// person would: run by tests/integration/web_graph.sh, which starts `heapsift web` over
// two profiles of tests/programs/grow and writes what the page must show (from `heapsift
// graph` and `heapsift list`) into a JSON file.
//
// usage: node web_graph.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks: the Graph tab opened from the URL (#graph) draws heapsift graph's boxes, with
// site_grow's value; the wheel zooms in at the pointer, a drag pans, Fit goes back; a
// click on site_grow's box focuses the views on it (a focus chip says so, the graph
// redraws with heapsift graph --focus's boxes); "Source of site_grow" opens the Source tab
// with heapsift list's text; Clear focus; "colour by change since A" gives the boxes
// heapsift graph --base's verdicts; granularity lines gives heapsift graph --granularity
// lines's boxes; the state is in the URL: a reload keeps tab, colouring and the Source
// regex, and a URL naming a focus opens focused. Prints "N passed, N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const listing = readFileSync(want.list, "utf8");
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

const names = () => page.locator("#graphbox g.node[data-name]").evaluateAll(
  (gs) => gs.map((g) => g.dataset.name).sort().join(","));
// The focus chip's regular expression ("" when there is none).
const focusChip = () => page.evaluate(() => [...document.querySelectorAll('#chips .chip[data-kind="focus"]')]
  .map((c) => c.dataset.value).join("|"));
const viewBox = () => page.locator("#graph-svg").evaluate(
  (s) => s.getAttribute("viewBox").split(/[\s,]+/).map(Number));

await run(ctx, shots, async () => {
  await page.goto(url + "#graph");
  await page.waitForSelector("#view-graph:not([hidden]) #graphbox g.node[data-name]");
  check(await page.locator('#tabs button[data-tab="graph"]').getAttribute("class") === "on",
        "Graph: the tab named in the URL is open");
  const drawn = await names();
  check(drawn === want.nodes, "Graph: heapsift graph's boxes", drawn + " want " + want.nodes);
  const grow = page.locator('#graphbox g.node[data-name="site_grow"]');
  const html = await grow.evaluate((g) => g.outerHTML);
  check(html.includes(want.grow), "Graph: site_grow's box says " + want.grow, html.slice(0, 300));
  await page.screenshot({ path: shots + "-graph.png", fullPage: true });

  // Zoom in with the wheel at the middle of the box, pan with a drag, Fit.
  const box = await page.locator("#graphbox").boundingBox();
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  const v0 = await viewBox();
  await page.mouse.move(cx, cy);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((w) => +document.querySelector("#graph-svg").getAttribute("viewBox")
    .split(/[\s,]+/)[2] < w, v0[2]);
  const v1 = await viewBox();
  check(v1[2] < v0[2] * 0.9 && v1[3] < v0[3] * 0.9, "Graph: the wheel zooms in",
        v0.join(" ") + " -> " + v1.join(" "));
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await page.mouse.move(cx + 120, cy + 60, { steps: 6 });
  await page.mouse.up();
  const v2 = await viewBox();
  check(v2[0] < v1[0] && v2[1] < v1[1] && v2[2] === v1[2], "Graph: a drag pans (same zoom)",
        v1.join(" ") + " -> " + v2.join(" "));
  check(await focusChip() === "", "Graph: a drag focuses on nothing");
  await page.click("#graph-fit");
  const v3 = await viewBox();
  check(Math.abs(v3[2] - v0[2]) < 0.01 && Math.abs(v3[0] - v0[0]) < 0.01, "Graph: Fit shows it all",
        v3.join(" "));

  // Click site_grow's box: the views focus on it.
  await grow.click();
  await page.waitForSelector('#chips .chip[data-kind="focus"][data-value="^site_grow$"]');
  await page.waitForFunction((w) => [...document.querySelectorAll("#graphbox g.node[data-name]")]
    .map((g) => g.dataset.name).sort().join(",") === w, want.focused);
  check(true, "Graph: a click on site_grow focuses on it: heapsift graph --focus's boxes");
  await page.screenshot({ path: shots + "-focused.png", fullPage: true });

  // Its source, from the button under the graph.
  await page.click("#graph-source");
  await page.waitForSelector("#view-source:not([hidden]) #source-text:not([hidden])");
  const text = await page.locator("#source-text").evaluate((p) => p.textContent);
  check(text === listing, "Source: heapsift list's text for site_grow",
        JSON.stringify(text.slice(0, 200)) + " want " + JSON.stringify(listing.slice(0, 200)));
  check(await page.locator("#source-fn").inputValue() === "^site_grow$", "Source: its regex shown");
  await page.screenshot({ path: shots + "-source.png", fullPage: true });
  // Typing another name and Enter lists it.
  await page.fill("#source-fn", "^main$");
  await page.press("#source-fn", "Enter");
  await page.waitForFunction(() => document.querySelector("#source-text").textContent
    .includes("ROUTINE ======================== main in "));
  check(true, "Source: Enter lists main");

  // Back to the graph: clear the focus, then colour by change since A.
  await page.click('#tabs button[data-tab="graph"]');
  await page.click("#graph-unfocus");
  await page.waitForFunction((w) => [...document.querySelectorAll("#graphbox g.node[data-name]")]
    .map((g) => g.dataset.name).sort().join(",") === w, want.nodes);
  check(await focusChip() === "", "Graph: Clear focus");
  // Granularity lines: heapsift graph --granularity lines's boxes; and back.
  await page.selectOption("#gran", "lines");
  await page.waitForFunction((w) => [...document.querySelectorAll("#graphbox g.node[data-name]")]
    .map((g) => g.dataset.name).sort().join(",") === w, want.lines);
  check(true, "Graph: granularity lines gives heapsift graph --granularity lines's boxes");
  check(page.url().includes("granularity=lines"), "URL: granularity kept", page.url());
  await page.screenshot({ path: shots + "-lines.png", fullPage: true });
  await page.selectOption("#gran", "functions");
  await page.waitForFunction((w) => [...document.querySelectorAll("#graphbox g.node[data-name]")]
    .map((g) => g.dataset.name).sort().join(",") === w, want.nodes);
  await page.check("#graph-diff");
  await page.waitForSelector('#graphbox g.node[data-name="site_grow"].grew');
  for (const [fn, cls] of Object.entries(want.classes)) {
    const c = await page.locator(`#graphbox g.node[data-name="${fn}"]`).getAttribute("class");
    check(c.split(/\s+/).includes(cls), `Graph against A: ${fn} is "${cls}" as heapsift graph --base says`, c);
  }
  await page.screenshot({ path: shots + "-diff.png", fullPage: true });

  // A reload (or the URL shared) gives the same view: tab, profiles, colouring, regex.
  const shared = page.url();
  check(/#graph&/.test(shared) && shared.includes("graphdiff=1") && shared.includes("fn=%5Emain%24"),
        "URL: tab, colouring and source regex in the fragment", shared);
  await page.reload();
  await page.waitForSelector('#view-graph:not([hidden]) #graphbox g.node[data-name="site_grow"].grew');
  check(await page.locator("#graph-diff").isChecked(), "reload: Graph tab, coloured against A again");
  check(await page.locator("#source-fn").inputValue() === "^main$", "reload: the Source regex kept");
  // Focus in the URL: a fresh page opened on it is focused.
  await page.goto(url + "#graph&focus=%5Esite_grow%24");
  await page.waitForFunction((w) => [...document.querySelectorAll("#graphbox g.node[data-name]")]
    .map((g) => g.dataset.name).sort().join(",") === w, want.focused);
  check(await focusChip() === "^site_grow$", "URL: a focus given in it applies (as a chip)");

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(pageErrors.length === 0, "no JavaScript error", pageErrors.join(" | "));
});
