// The refinements of the `heapsift web` page as chips, in headless Chromium: run by
// tests/integration/web_refine.sh, which starts `heapsift web` over two profiles of
// tests/programs/labeled and writes what the page must show (the rows of `heapsift top
// --unit U` of profile B under each set of refinements, held to go tool pprof -top there;
// `heapsift graph` and `heapsift diff` under focus + tagfocus) into a JSON file.
//
// usage: node web_refine.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks, clicking as a person would: the Top rows without refinement; ignore added with
// the kind menu, the text box and Add; hide added from a Top row's right-click menu; the
// ignore chip's x (the rows of --hide alone), the hide chip's x (the rows come back);
// show; focus from the right-click menu, then tagfocus: each time the rows of heapsift top
// with the same options; the Graph's boxes and the Diff's rows under them; a reload and
// the URL keep the chips and rows; a bad regular expression is refused with the server's
// message and adds no chip; an old URL's focus= opens as a focus chip; hide and ignore
// from a right-click on a flame frame and a graph box; the granularity chip. Prints "N
// passed, N failed".
import { readFileSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

// The Top table's rows as [flat, flat%, sum%, cum, cum%, name], like the JSON's.
const topRows = () => page.locator("#top-table tbody tr[data-name]").evaluateAll((trs) =>
  trs.map((tr) => { const c = [...tr.cells].map((td) => td.textContent.trim());
                    return [c[0], c[1], c[2], c[3], c[4], c[6]]; }));
// The chips as "kind=value" in their order.
const chips = () => page.locator("#chips .chip").evaluateAll((cs) =>
  cs.map((c) => c.dataset.kind + "=" + c.dataset.value).join(" "));

// Waits until the Top table shows the rows of want.rows[name] and checks them.
async function expectRows(name, what) {
  const w = JSON.stringify(want.rows[name]);
  try {
    await page.waitForFunction((w) => JSON.stringify([...document.querySelectorAll("#top-table tbody tr[data-name]")]
      .map((tr) => { const c = [...tr.cells].map((td) => td.textContent.trim());
                     return [c[0], c[1], c[2], c[3], c[4], c[6]]; })) === w, w, { timeout: 30000 });
  } catch (e) { /* reported below */ }
  const got = JSON.stringify(await topRows());
  check(got === w, what, got + " want " + w);
}

async function addChip(kind, value) {
  await page.selectOption("#refine-kind", kind);
  await page.fill("#refine-value", value);
  await page.click("#refine-add");
}

async function contextAction(row, kind, shot) {
  await page.click(`#top-table tbody tr[data-name="${row}"] td.name`, { button: "right" });
  await page.waitForSelector("#ctxmenu:not([hidden])");
  if (shot) await page.screenshot({ path: shots + "-" + shot + ".png", fullPage: true });
  await page.click(`#ctxmenu button[data-kind="${kind}"]`);
}

await run(ctx, shots, async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="top"]'); // the page opens on the Diagnosis
  await page.waitForSelector("#top-table tbody tr[data-name]");
  await expectRows("base", "Top: heapsift top's rows with no refinement");
  check(await page.locator("#refine-bar").isHidden(), "no refinement: no chip bar");

  await addChip("ignore", "^mixed$");
  await page.waitForSelector('#chips .chip[data-kind="ignore"][data-value="^mixed$"]');
  await expectRows("ignore", "ignore ^mixed$ (kind, text, Add): heapsift top --ignore's rows, as go tool pprof -top -ignore's");
  check(!(await page.locator('#top-table tbody tr[data-name="mixed"]').count()), "ignore: the mixed row is gone");

  await contextAction("site_alloc", "hide");
  await page.waitForSelector('#chips .chip[data-kind="hide"][data-value="^site_alloc$"]');
  await expectRows("ignore_hide", "right-click site_alloc, Hide it: heapsift top --ignore --hide's rows");
  check(await chips() === "ignore=^mixed$ hide=^site_alloc$", "two chips, in the order added", await chips());
  check(page.url().includes("ignore=%5Emixed%24") && page.url().includes("hide=%5Esite_alloc%24"),
        "the URL names both refinements", page.url());
  await page.screenshot({ path: shots + "-chips.png", fullPage: true });

  await page.click('#chips .chip[data-kind="ignore"] button.x');
  await expectRows("hide", "ignore's x: the rows of heapsift top --hide alone (mixed is back)");
  await page.click('#chips .chip[data-kind="hide"] button.x');
  await expectRows("base", "hide's x: the unrefined rows return");
  check(await page.locator("#refine-bar").isHidden(), "no chip left: the bar is gone");

  await addChip("show", "site_alloc|main");
  await expectRows("show", "show site_alloc|main: heapsift top --show's rows, as go tool pprof -top -show's");
  await page.click('#chips .chip[data-kind="show"] button.x');
  await expectRows("base", "show's x: the unrefined rows return");

  // A bad regular expression is refused with the server's message.
  await addChip("ignore", "(");
  await page.waitForSelector("#refine-err:not([hidden])");
  const msg = await page.locator("#refine-err").innerText();
  check(msg.startsWith("ignore: bad regular expression '('"), "a bad regex is refused with the server's 400", msg);
  check(await chips() === "", "a refused refinement adds no chip", await chips());

  await contextAction("tenant_main", "focus", "menu");
  await page.waitForSelector('#chips .chip[data-kind="focus"][data-value="^tenant_main$"]');
  await expectRows("focus", "right-click tenant_main, Focus on it: heapsift top --focus's rows");
  check(await page.locator("#refine-err").isHidden(), "the error goes once a refinement applies");
  await addChip("tagfocus", "tenant=acme");
  await page.waitForSelector('#chips .chip[data-kind="tagfocus"]');
  await expectRows("focus_tag", "tagfocus tenant=acme: heapsift top --focus --tagfocus's rows, as go tool pprof's");
  await page.screenshot({ path: shots + "-top.png", fullPage: true });

  // Every view honours them: the Graph's boxes, the Diff's rows, the flame graph's total.
  await page.click('#tabs button[data-tab="graph"]');
  try {
    await page.waitForFunction((w) => [...document.querySelectorAll("#graphbox g.node[data-name]")]
      .map((g) => g.dataset.name).sort().join(",") === w, want.graph, { timeout: 30000 });
  } catch (e) { /* reported below */ }
  const gn = await page.locator("#graphbox g.node[data-name]").evaluateAll((gs) => gs.map((g) => g.dataset.name).sort().join(","));
  check(gn === want.graph, "Graph: heapsift graph --focus --tagfocus's boxes", gn + " want " + want.graph);
  await page.screenshot({ path: shots + "-graph.png", fullPage: true });
  await page.click('#tabs button[data-tab="diff"]');
  await page.waitForSelector("#diff-table tbody tr[data-name]");
  const strip = (s) => s.replace(/^\+/, "");
  const drows = await page.locator("#diff-table tbody tr[data-name]").evaluateAll((trs) =>
    trs.map((tr) => [...tr.cells].map((td) => td.textContent.trim())));
  const dgot = JSON.stringify(drows.map((r) => r.map(strip)));
  check(dgot === JSON.stringify(want.diff.map((r) => r.map(strip))), "Diff: heapsift diff --focus --tagfocus's rows",
        dgot + " want " + JSON.stringify(want.diff));
  await page.click('#tabs button[data-tab="flame"]');
  await page.waitForSelector("#flamebox g.fr");
  const fsum = await page.locator("#flame-summary").innerText();
  const ft = want.rows.focus_tag.find((r) => r[5] === "tenant_main")[3];
  check(fsum.includes("total " + ft), "Flame: its total is tenant_main's cum under both refinements " + ft, fsum);
  check(!(await page.locator('#flamebox g.fr[data-name="mixed"]').count()), "Flame: no frame of mixed under the focus");

  // Reload: the same chips and rows; then Top.
  await page.click('#tabs button[data-tab="top"]');
  await page.waitForSelector("#top-table tbody tr[data-name]");
  const before = await chips();
  await page.reload();
  await page.waitForSelector("#top-table tbody tr[data-name]");
  check(await chips() === before && before === "focus=^tenant_main$ tagfocus=tenant=acme",
        "reload: the same chips", await chips());
  await expectRows("focus_tag", "reload: the same rows");

  // A new tagfocus replaces the old one; removing focus leaves the tag filter alone.
  await page.click('#chips .chip[data-kind="focus"] button.x');
  await expectRows("tag", "focus's x: heapsift top --tagfocus's rows");

  // An old URL's focus= opens as a focus chip.
  await page.goto(url + "#top&focus=%5Etenant_main%24");
  await page.waitForSelector('#chips .chip[data-kind="focus"]');
  await expectRows("focus", "an old URL's focus=: heapsift top --focus's rows");
  check(await chips() === "focus=^tenant_main$", "an old URL's focus= is a chip", await chips());

  // From the flame graph and the call graph: right-click a frame, a box.
  await page.click('#tabs button[data-tab="flame"]');
  await page.click('#flamebox g.fr[data-name="work"] rect', { button: "right" });
  await page.click('#ctxmenu button[data-kind="hide"]');
  await page.waitForSelector('#chips .chip[data-kind="hide"][data-value="^work$"]');
  await page.waitForFunction(() => document.querySelector('#flamebox g.fr[data-name="site_alloc"]') &&
    !document.querySelector('#flamebox g.fr[data-name="work"]'));
  check(true, "Flame: right-click work, Hide it: its frames are gone, site_alloc's stay");
  await page.click('#tabs button[data-tab="graph"]');
  await page.click('#graphbox g.node[data-name="site_alloc"]', { button: "right" });
  await page.click('#ctxmenu button[data-kind="ignore"]');
  await page.waitForSelector('#chips .chip[data-kind="ignore"][data-value="^site_alloc$"]');
  check(await chips() === "focus=^tenant_main$ hide=^work$ ignore=^site_alloc$",
        "Graph: right-click site_alloc, Ignore it: a chip", await chips());
  // Granularity other than functions is a chip too; its x goes back to functions.
  await page.selectOption("#gran", "lines");
  await page.waitForSelector('#chips .chip[data-kind="granularity"][data-value="lines"]');
  await page.click('#chips .chip[data-kind="granularity"] button.x');
  await page.waitForFunction(() => !document.querySelector('#chips .chip[data-kind="granularity"]'));
  check(await page.locator("#gran").inputValue() === "functions", "granularity's chip: its x goes back to functions");
  await page.screenshot({ path: shots + "-context.png", fullPage: true });

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  // The refused regex's 400 is logged by Chromium as a failed load: expected, not an error.
  const errs = pageErrors.filter((m) => !/Failed to load resource: .* 400 \(Bad Request\)/.test(m));
  check(errs.length === 0, "no JavaScript error", errs.join(" | "));
});
