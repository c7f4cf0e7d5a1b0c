// A tour of every tab of the `heapsift web` page in headless Chromium, with a screenshot
// of each, and profiles opened from the browser: run by tests/integration/web_tour.sh over
// a directory of tests/programs/leakseries dumps, with `heapsift top`'s rows (of the newest
// dump and of the files to upload, in every unit) in a JSON file.
//
// usage: node web_tour.mjs URL EXPECT.json SCREENSHOT_DIR
// For each tab of the nav (read from the page, not a fixed list): its content is real
// (Top: heapsift top's rows; Flame, Graph, Source: site_leak drawn or listed; Peek: its
// callers and callees as heapsift peek prints them; Diff and
// Suspects: site_leak grew; Series: a point per profile; any other tab: some text and no
// error), DIR/TAB.png is saved, and a reload from the URL shows the same tab, state and
// content. Clicks through: a Top row opens the flame graph with it highlighted; a graph
// box focuses the views on it; a right-click on a Top row opens Peek on it. Every tab once more with an ignore chip added through the
// controls and A pinned: reloaded from its URL, the same view. Uploads: the "Open profile…" input (setInputFiles) and a
// drop event carrying a DataTransfer each open a new target, the page switches to it and
// its Top rows are heapsift top's of the file; the same file opened again joins its
// target; a file that is no profile is an error in the page, and the page goes on working. Prints "N passed, N failed".
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, dir] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
// heapsift top marks a function inlined at every call site "NAME (inline)"; the page's
// row is NAME (the same row, as the flame graph names it).
for (const rows of [want.top, want.upload.rows, want.drop.rows]) {
  for (const u of Object.keys(rows)) for (const r of rows[u]) r[5] = r[5].replace(/ \(inline\)$/, "");
}
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

// The page's unit for target t: that of its largest live heap or RSS (core.js pageUnit).
const unitOf = (t) => page.evaluate(async (t) => {
  const j = await (await fetch("/api/profiles?target=" + t)).json();
  let m = Math.max(...j.profiles.flatMap((p) => [p.inuse || 0, p.rss || 0]));
  const u = ["B", "kB", "MB", "GB", "TB", "PB"];
  let i = 0;
  while (m >= 1024 && i < 5) { m /= 1024; i++; }
  return u[i];
}, t);

const topRows = () => page.locator("#top-table tbody tr[data-name]").evaluateAll((trs) =>
  trs.map((tr) => { const c = [...tr.cells].map((td) => td.textContent.trim());
                    return [c[0], c[1], c[2], c[3], c[4], c[6]]; }));

// Waits for a render of tab with a profile B that finished after the time since (main.js
// stamps body's dataset with "TAB:A:B:TIME").
async function rendered(tab, since) {
  await page.waitForFunction(([tab, since]) => {
    const r = (document.body.dataset.rendered || "").split(":");
    return r[0] === tab && r[2] !== "null" && +r[r.length - 1] > since;
  }, [tab, since]);
}
const now = () => page.evaluate(() => Date.now());

// Checks tab's content; returns a short description of it (compared after a reload).
const content = {
  async top() {
    await page.waitForSelector("#top-table tbody tr[data-name]");
    const u = await unitOf(0), rows = await topRows();
    check(JSON.stringify(rows) === JSON.stringify(want.top[u]), `Top: heapsift top --unit ${u}'s rows`,
          JSON.stringify(rows.slice(0, 3)) + " want " + JSON.stringify(want.top[u].slice(0, 3)));
    check(rows.some((r) => r[5] === "site_leak") && rows.some((r) => r[5] === "site_flat"),
          "Top: site_leak and site_flat are rows");
    return rows.map((r) => r.join(" ")).join("|");
  },
  async flame() {
    await page.waitForSelector('#flamebox g.fr[data-name="site_leak"]');
    const n = await page.locator("#flamebox g.fr").count();
    check(n >= 8, "Flame: frames drawn, site_leak among them", n);
    return page.locator("#flamebox g.fr").evaluateAll((gs) => gs.map((g) => g.dataset.name).sort().join(","));
  },
  async graph() {
    await page.waitForSelector('#graphbox g.node[data-name="site_leak"]');
    const names = await page.locator("#graphbox g.node[data-name]").evaluateAll(
      (gs) => gs.map((g) => g.dataset.name).sort().join(","));
    check(["site_leak", "site_flat", "site_churn", "main"].every((n) => names.split(",").includes(n)),
          "Graph: boxes for site_leak, site_flat, site_churn, main", names);
    return names;
  },
  async source() {
    if (!(await page.locator("#source-fn").inputValue())) {
      await page.fill("#source-fn", "^site_leak$");
      await page.press("#source-fn", "Enter");
    }
    await page.waitForFunction(() => !document.querySelector("#source-text").hidden &&
      /ROUTINE =+ site_leak /.test(document.querySelector("#source-text").textContent));
    const text = await page.locator("#source-text").textContent();
    check(/ROUTINE =+ site_leak in .*leakseries\.c/.test(text), "Source: site_leak's lines in leakseries.c",
          text.slice(0, 120));
    return text;
  },
  async peek() {
    if (!(await page.locator("#peek-fn").inputValue())) {
      await page.fill("#peek-fn", "^site_leak$");
      await page.press("#peek-fn", "Enter");
    }
    await page.waitForFunction(() => !document.querySelector("#peek-text").hidden &&
      /\| site_leak\n/.test(document.querySelector("#peek-text").textContent));
    const text = await page.locator("#peek-text").textContent();
    const u = await unitOf(0), cli = readFileSync(`${want.peek}.${u}.txt`, "utf8");
    check(text === cli, `Peek: site_leak's callers and callees, heapsift peek --unit ${u}'s text`,
          text.slice(0, 200) + " != " + cli.slice(0, 200));
    return text;
  },
  async diff() {
    await page.waitForSelector('#diff-table tbody tr[data-name="site_leak"]');
    const cls = await page.locator('#diff-table tbody tr[data-name="site_leak"]').getAttribute("class");
    check(cls === "grew", "Diff: site_leak grew from the first dump to the last", cls);
    return page.locator("#diff-table tbody").innerText();
  },
  async series() {
    await page.waitForSelector("#series-box svg circle.pt-inuse");
    const n = await page.locator("#series-box svg circle.pt-inuse").count();
    check(n === want.profiles, `Series: a live heap point per profile (${want.profiles})`, n);
    return String(n);
  },
  async suspects() {
    await page.waitForSelector("#suspects-table tbody tr");
    const rows = await page.locator("#suspects-table tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [tr.cells[0].textContent, tr.querySelector("td.name").textContent]));
    const leak = rows.find((r) => r[1].includes("site_leak"));
    check(leak && leak[0] === "growing", "Suspects: site_leak's stack is growing", JSON.stringify(rows));
    return rows.map((r) => r.join(" ")).join("|");
  },
};

// A tab nobody told this test about: visible, some text, no error shown.
async function otherContent(tab) {
  await page.waitForFunction((tab) => {
    const v = document.querySelector("#view-" + tab);
    return v && !v.hidden && v.innerText.trim().length > 20;
  }, tab);
  const text = await page.locator("#view-" + tab).innerText();
  check(await page.locator("#err").isHidden(), `${tab}: shows content and no error`,
        await page.locator("#err").textContent());
  return text.replace(/[0-9]/g, ""); // compared after a reload: times and ages may move on
}

// Where two texts part: the first differing offset and each side from a little before it.
function parted(a, b) {
  a = String(a); b = String(b);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const at = Math.max(0, i - 40), cut = (s) => JSON.stringify(s.slice(at, i + 120));
  return `after a reload, at offset ${i} of ${a.length} (was ${b.length}): ${cut(a)} != ${cut(b)}`;
}

async function visit(tab) {
  const t0 = await now();
  await page.click(`#tabs button[data-tab="${tab}"]`);
  await rendered(tab, t0);
  const got = content[tab] ? await content[tab]() : await otherContent(tab);
  check(await page.locator("#err").isHidden(), `${tab}: no error shown`, await page.locator("#err").textContent());
  await page.screenshot({ path: `${dir}/${tab}.png`, fullPage: true });
  // The same view from the URL: a reload.
  const href = page.url();
  check(href.includes("#" + tab), `${tab}: the URL names the tab`, href);
  const t1 = await now();
  await page.reload();
  await rendered(tab, t1);
  check(await page.locator(`#tabs button[data-tab="${tab}"]`).getAttribute("class") === "on" &&
        page.url() === href, `${tab}: a reload opens the same tab and state`, page.url());
  const again = content[tab] ? await content[tab]() : await otherContent(tab);
  check(again === got, `${tab}: a reload shows the same content`, parted(again, got));
}

// A tab with the ignore chip and A pinned: no site_churn where functions are drawn, the
// URL says both, DIR/TAB-refined.png, and a reload shows the same (its text, digits aside).
const churnIn = {
  top: '#top-table tbody tr[data-name="site_churn"]',
  flame: '#flamebox g.fr[data-name="site_churn"]',
  graph: '#graphbox g.node[data-name="site_churn"]',
};
async function visitRefined(tab) {
  const t0 = await now();
  await page.click(`#tabs button[data-tab="${tab}"]`);
  await rendered(tab, t0);
  const got = await otherContent(tab);
  if (churnIn[tab]) {
    await page.waitForSelector(churnIn[tab].replace(/\[data-name=.*$/, "")); // drawn
    check(await page.locator(churnIn[tab]).count() === 0, `${tab}, refined: no site_churn (ignored)`);
  }
  const href = page.url();
  check(href.includes("ignore=%5Esite_churn%24") && href.includes("pin=1"),
        `${tab}, refined: the chip and the pin are in the URL`, href);
  await page.screenshot({ path: `${dir}/${tab}-refined.png`, fullPage: true });
  const t1 = await now();
  await page.reload();
  await rendered(tab, t1);
  check(await page.locator('#chips .chip[data-kind="ignore"][data-value="^site_churn$"]').count() === 1 &&
        await page.locator("#pin-a").textContent() === "Unpin A" && page.url() === href,
        `${tab}, refined: a reload keeps the chip, the pin and the state`, page.url());
  const again = await otherContent(tab);
  check(again === got, `${tab}, refined: a reload shows the same content`, parted(again, got));
}

// Sends a file the way a drop does: a DataTransfer with a File, dispatched on the page.
async function drop(file) {
  const b64 = readFileSync(file).toString("base64");
  await page.evaluate(([b64, name]) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], name));
    document.querySelector("main").dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
    document.querySelector("main").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [b64, basename(file)]);
}

// After an upload: the page is on a new target named after the file, its Top rows are
// heapsift top's of it.
async function opened(how, file, index, rows) {
  const name = basename(file);
  await page.waitForFunction(([i, name]) => {
    const s = document.querySelector("#target");
    return s.value === String(i) && s.selectedOptions[0].textContent.startsWith(name + " (uploaded)");
  }, [index, name]);
  check(true, `${how}: the page switched to a new target "${name} (uploaded)"`);
  await page.waitForFunction((i) => (document.body.dataset.rendered || "").startsWith("top:") &&
    location.hash.includes("target=" + i) && document.querySelector("#top-table tbody tr[data-name]"), index);
  const u = await unitOf(index);
  await page.waitForFunction((n) => document.querySelectorAll("#top-table tbody tr[data-name]").length === n,
                             rows[u].length).catch(() => {});
  const got = await topRows();
  check(JSON.stringify(got) === JSON.stringify(rows[u]), `${how}: Top rows are heapsift top --unit ${u} of ${name}`,
        JSON.stringify(got.slice(0, 3)) + " want " + JSON.stringify(rows[u].slice(0, 3)));
  check(got.some((r) => r[5].startsWith("take")), `${how}: tracked's take is a row`);
  await page.screenshot({ path: `${dir}/upload-${how}.png`, fullPage: true });
}

await run(ctx, dir + "/tour", async () => {
  await page.goto(url);
  await page.click('#tabs button[data-tab="top"]'); // the page opens on the Diagnosis
  await page.waitForSelector("#top-table tbody tr[data-name]");
  const tabs = await page.locator("#tabs button[data-tab]").evaluateAll((bs) => bs.map((b) => b.dataset.tab));
  check(tabs[0] === "diagnose" &&
        ["top", "flame", "graph", "source", "peek", "diff", "series", "history", "suspects"]
        .every((t) => tabs.includes(t)), "the nav has the ten known tabs, Diagnosis first", tabs.join(","));
  for (const tab of tabs) await visit(tab);

  // Click through: a Top row opens the flame graph with that function highlighted.
  await page.click('#tabs button[data-tab="top"]');
  await page.click('#top-table tbody tr[data-name="site_leak"] td.name');
  await page.waitForSelector("#view-flame:not([hidden]) #flamebox g.fr");
  check(await page.locator("#flame-search").inputValue() === "^site_leak$", "Top row → Flame, searching ^site_leak$");
  await page.waitForFunction(() => document.querySelector('#flamebox g.fr[data-name="site_leak"] rect')
    .getAttribute("fill") === "#d63adf");
  check(true, "Flame: site_leak highlighted");
  await page.screenshot({ path: `${dir}/click-top-to-flame.png`, fullPage: true });
  // A graph box focuses the views on its function.
  await page.click('#tabs button[data-tab="graph"]');
  await page.click('#graphbox g.node[data-name="site_leak"]');
  await page.waitForSelector('#chips .chip[data-kind="focus"][data-value="^site_leak$"]');
  await page.waitForFunction(() => !document.querySelector('#graphbox g.node[data-name="site_flat"]') &&
    document.querySelector('#graphbox g.node[data-name="site_leak"]'));
  check(page.url().includes("focus=%5Esite_leak%24"), "Graph box → focus on site_leak, in the URL", page.url());
  await page.screenshot({ path: `${dir}/click-graph-focus.png`, fullPage: true });
  const t0 = await now();
  await page.reload();
  await rendered("graph", t0);
  check(await page.locator('#chips .chip[data-kind="focus"][data-value="^site_leak$"]').count() === 1 &&
        await page.locator('#graphbox g.node[data-name="site_flat"]').count() === 0,
        "reload: still focused on site_leak");
  await page.click('#chips .chip[data-kind="focus"] button.x'); // the chip removed: whole views again
  await page.waitForSelector('#graphbox g.node[data-name="site_flat"]');
  check(!page.url().includes("focus="), "focus chip removed: no focus in the URL", page.url());

  // A right-click on a Top row: "Callers and callees" opens Peek on that function.
  await page.click('#tabs button[data-tab="top"]');
  await page.click('#top-table tbody tr[data-name="site_flat"] td.name', { button: "right" });
  await page.click('#ctxmenu button[data-kind="peek"]');
  await page.waitForFunction(() => !document.querySelector("#view-peek").hidden &&
    /\| site_flat\n/.test(document.querySelector("#peek-text").textContent));
  check(await page.locator("#peek-fn").inputValue() === "^site_flat$" && page.url().includes("pfn=%5Esite_flat%24"),
        "right-click on Top's site_flat → Callers and callees: Peek on ^site_flat$, in the URL", page.url());
  await page.screenshot({ path: `${dir}/click-top-to-peek.png`, fullPage: true });
  await page.fill("#peek-fn", "^site_leak$"); // as the refined pass below expects it
  await page.press("#peek-fn", "Enter");

  // Every tab again, refined (an ignore chip added through the controls) and with A
  // pinned: the chip and the pin are in the URL, site_churn is gone from the Top, Flame
  // and Graph, and a reload gives the same view.
  await page.click('#tabs button[data-tab="top"]');
  await page.selectOption("#refine-kind", "ignore");
  await page.fill("#refine-value", "^site_churn$");
  await page.click("#refine-add");
  await page.waitForSelector('#chips .chip[data-kind="ignore"][data-value="^site_churn$"]');
  await page.click("#pin-a");
  await page.waitForFunction(() => document.querySelector("#pin-a").textContent === "Unpin A");
  for (const tab of tabs) await visitRefined(tab);
  await page.click('#chips .chip[data-kind="ignore"] button.x');
  await page.click("#pin-a");
  await page.waitForFunction(() => document.querySelector("#pin-a").textContent === "Pin A" &&
    !location.hash.includes("ignore="));

  // Open a profile: the file input, then a drop.
  await page.click('#tabs button[data-tab="top"]');
  await page.setInputFiles("#upload-file", want.upload.file);
  await opened("input", want.upload.file, 1, want.upload.rows);
  await drop(want.drop.file);
  await opened("drop", want.drop.file, 2, want.drop.rows);
  // The same file again joins its target, as a newer dump of it: profile B #2, A #1.
  await page.setInputFiles("#upload-file", want.upload.file);
  await page.waitForFunction(() => document.querySelector("#target").value === "1" &&
    document.querySelector("#profB").value === "2" && document.querySelector("#profA").value === "1");
  check(await page.locator("#target option").count() === 3 && await page.locator("#profB option").count() === 2,
        "input of tracked.pb.gz again: it joins its target (2 profiles, no new target)");
  await page.waitForSelector('#top-table tbody tr[data-name="comp_shared"]');
  // Not a profile: an error in the page; the page and server go on.
  await drop(want.bad);
  await page.waitForFunction(() => !document.querySelector("#err").hidden);
  const err = await page.locator("#err").textContent();
  check(/cannot open the profile: notes\.txt: not a profile heapsift reads/.test(err),
        "a dropped text file: the page says it is not a profile", err);
  await page.screenshot({ path: `${dir}/upload-error.png`, fullPage: true });
  const n = await page.locator("#target option").count();
  check(n === 3, "the bad file added no target", n);
  await page.selectOption("#target", "0");
  await page.waitForSelector('#top-table tbody tr[data-name="site_leak"]');
  check(true, "after the error the page switches back to the directory");
  check(await page.locator("#target-close").isHidden(), "the directory's target has no Close button");

  // Close: the dropped file's target is freed and leaves the list; the page goes to the
  // first target; a file opened after takes its place, its profile ids going on.
  await page.selectOption("#target", "2");
  await page.waitForSelector('#top-table tbody tr[data-name="comp_shared"]');
  await page.click("#target-close");
  await page.waitForFunction(() => document.querySelector("#target").value === "0" &&
    ![...document.querySelectorAll("#target option")].some((o) => o.value === "2"));
  await page.waitForSelector('#top-table tbody tr[data-name="site_leak"]');
  const gone = (await fetch(url + "api/profiles?target=2")).status; // from here, not the page
  check(await page.locator("#target option").count() === 2 && gone === 404,
        "Close on tracked.heap's target: it leaves the list, its API is a 404, the page is on the directory",
        `${await page.locator("#target option").count()} targets, /api/profiles?target=2: ${gone}`);
  await drop(want.drop.file);
  await page.waitForFunction(() => document.querySelector("#target").value === "2" &&
    document.querySelector("#profB").value === "2");
  check(await page.locator("#target option").count() === 3 && await page.locator("#target-close").isVisible(),
        "tracked.heap dropped again: a new target in the closed one's place, profile #2 (ids go on), Close shown");
  await page.waitForSelector('#top-table tbody tr[data-name="comp_shared"]');
  await page.screenshot({ path: `${dir}/upload-close.png`, fullPage: true });
  // Closed again; a URL that names it (kept from before) opens the first target instead.
  await page.click("#target-close");
  await page.waitForFunction(() => document.querySelector("#target").value === "0");
  await page.goto(url + "#top&target=2");
  await page.waitForFunction(() => document.querySelector("#target").value === "0" &&
    document.querySelector('#top-table tbody tr[data-name="site_leak"]'));
  check(await page.locator("#err").isHidden() && await page.locator("#target option").count() === 2,
        "a URL naming a closed target: the page opens the directory's, no error",
        await page.locator("#err").textContent());

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:"));
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  // Logged by Chromium as failed resources, and expected: the 400 of the bad upload, and
  // the 404s of requests naming target 2 once it is closed (those in flight as Close is
  // clicked, and the URL that names it).
  const errs = pageErrors.filter((e) => !/status of 400/.test(e) &&
                                        !/status of 404 .*\/api\/[a-z]+\?target=2(&|\)$)/.test(e));
  check(errs.length === 0, "no JavaScript error", errs.join(" | "));
});
