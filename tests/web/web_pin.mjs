// Pinning profile A in the `heapsift web` page, in headless Chromium: run by
// tests/integration/web_pin.sh, which starts `heapsift web` over a directory holding dumps
// #1 to #3 (#2, A, of its own size) and writes into a JSON file the directory, the dump
// to copy in as new ones, and A's total by `heapsift top`.
//
// usage: node web_pin.mjs URL EXPECT.json SCREENSHOT_PREFIX
// Checks, clicking as a person would: pick #2 as A, "Pin A": the button, the note, the
// option and the API say pinned, the URL says pin=1; 40 dumps arrive in four batches:
// #1 and #3 leave, A stays selected and pinned, the Diff's A total is heapsift top's for
// A's file; a reload keeps it; "Unpin A", and the next dump evicts it (A becomes the
// oldest kept); with 8 pins a ninth is refused with the server's message; a URL saying
// pin=1 pins its A again. Prints "N passed, N failed".
import { copyFileSync, readFileSync, renameSync, utimesSync } from "node:fs";
import { check, openPage, run } from "./harness.mjs";

const [url, expectFile, shots] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
const ctx = await openPage();
const { page, pageErrors, requests } = ctx;

const profiles = async () => (await (await fetch(url + "api/profiles?target=0")).json()).profiles;
let seq = 10;

// count new dumps into the directory, as heapsift writes them: a temporary name, then
// renamed; mtimes one second apart. Waits until the server lists the last one.
async function arrive(count) {
  let last = "";
  for (let i = 0; i < count; i++, seq++) {
    const tmp = `${want.dir}/d${seq}.pb.gz.tmp.1`, t = want.start + seq;
    last = `d${seq}.pb.gz`;
    copyFileSync(want.big, tmp);
    utimesSync(tmp, t, t);
    renameSync(tmp, `${want.dir}/${last}`);
  }
  for (let k = 0; k < 300; k++) {
    const ps = await profiles();
    if (ps.length && ps[ps.length - 1].label === last) return ps;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the server did not pick up " + last);
}

// Waits for the page to show profile A pinned (or not) on its button.
const pinButton = (text) => page.waitForFunction((t) => document.querySelector("#pin-a").textContent === t, text);

await run(ctx, shots, async () => {
  await page.goto(url + "#diff");
  await page.waitForSelector("#profA option[value=\"2\"]", { state: "attached" });
  await page.selectOption("#profA", "2");
  await page.waitForSelector("#diff-summary b");
  await page.click("#pin-a");
  await pinButton("Unpin A");
  let ps = await profiles();
  check(ps.find((p) => p.id === 2)?.pinned === true, "Pin A: the API lists #2 as pinned");
  const note = await page.locator("#pin-note").innerText();
  check(note.startsWith("A #2 is pinned: kept while the ring of 32 rolls on (1 of 8 pins)"), "Pin A: the note says so", note);
  const opt = await page.locator('#profA option[value="2"]').innerText();
  check(opt.includes("pinned"), "Pin A: its option says pinned", opt);
  await page.waitForFunction(() => location.hash.includes("pin=1"));
  check(/[#&]a=2(&|$)/.test(new URL(page.url()).hash), "the URL names A and pin=1", page.url());

  // The ring rolls on: 40 dumps in four batches.
  for (let b = 0; b < 4; b++) ps = await arrive(10);
  const ids = ps.map((p) => p.id);
  check(ids.length === 33 && ids[0] === 2 && ids[1] === ids[32] - 31,
        "after 40 more dumps: A #2 and the newest 32 are kept", ids.join(","));
  check(!ids.includes(1) && !ids.includes(3), "#1 and #3, A's neighbours, were evicted", ids.join(","));
  check(ps[0].pinned && ps.slice(1).every((p) => !p.pinned), "only A is pinned");
  const newest = ids[ids.length - 1];
  await page.waitForFunction((n) => document.querySelector("#profB").value === String(n), newest);
  check(await page.locator("#profA").inputValue() === "2", "A is still #2 in the page");
  await page.waitForFunction((n) => document.querySelector("#diff-summary").textContent.includes("B #" + n), newest);
  const sum = await page.locator("#diff-summary").innerText();
  check(sum.startsWith("A #2 " + want.a_total + " → B #" + newest), "Diff: A's total is heapsift top's for A's file " + want.a_total, sum);
  await page.screenshot({ path: shots + "-pinned.png", fullPage: true });

  // Reload from the URL: the same view.
  await page.reload();
  await page.waitForFunction((n) => document.querySelector("#diff-summary").textContent.includes("B #" + n), newest);
  check(await page.locator("#profA").inputValue() === "2", "reload: A is #2");
  check((await page.locator("#diff-summary").innerText()) === sum, "reload: the same Diff", await page.locator("#diff-summary").innerText());
  await pinButton("Unpin A");
  check(true, "reload: A is still shown pinned");

  // Unpinned, A leaves with the next dump; the page's A becomes the oldest kept.
  await page.click("#pin-a");
  await pinButton("Pin A");
  ps = await profiles();
  check(!ps.find((p) => p.id === 2).pinned, "Unpin A: the API lists #2 unpinned (still kept until the next dump)");
  await page.waitForFunction(() => !location.hash.includes("pin=1"));
  ps = await arrive(1);
  check(!ps.some((p) => p.id === 2) && ps.length === 32, "the next dump evicts the unpinned A", ps.map((p) => p.id).join(","));
  await page.waitForFunction((o) => document.querySelector("#profA").value === String(o), ps[0].id);
  check(true, "the page's A becomes the oldest kept, #" + ps[0].id);

  // Eight pins at most: the ninth is refused with the server's message.
  const others = ps.slice(-8).map((p) => p.id);
  const codes = await page.evaluate(async (ids) => {
    const out = [];
    for (const id of ids) out.push((await fetch("/api/pin?target=0&id=" + id, { method: "POST" })).status);
    return out;
  }, others);
  check(codes.every((c) => c === 200), "eight pins are taken", codes.join(","));
  const ninth = ps[5].id;
  await page.selectOption("#profA", String(ninth));
  await page.waitForFunction((n) => document.querySelector("#diff-summary").textContent.startsWith("A #" + n), ninth);
  await page.click("#pin-a");
  await page.waitForSelector("#pin-note.bad");
  const err = await page.locator("#pin-note").innerText();
  check(err === `Cannot pin A #${ninth}: at most 8 profiles of a target can be pinned: unpin one first`,
        "the ninth pin is refused with the server's message", err);
  ps = await profiles();
  check(ps.filter((p) => p.pinned).length === 8 && !ps.find((p) => p.id === ninth).pinned, "still 8 pins");
  await page.screenshot({ path: shots + "-cap.png", fullPage: true });

  // A URL saying pin=1 pins its A again (one pin freed first).
  await page.evaluate(async (id) => fetch("/api/unpin?target=0&id=" + id, { method: "POST" }), others[0]);
  await page.goto("about:blank");
  await page.goto(url + "#diff&a=" + ninth + "&pin=1");
  await pinButton("Unpin A");
  ps = await profiles();
  check(ps.find((p) => p.id === ninth).pinned, "a URL with pin=1 pins its A #" + ninth);

  const foreign = requests.filter((u) => !u.startsWith(url) && !u.startsWith("data:") && u !== "about:blank");
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  // The refused ninth pin's 409 is logged by Chromium as a failed load: expected.
  const errs = pageErrors.filter((m) => !/Failed to load resource: .* 409 \(Conflict\)/.test(m));
  check(errs.length === 0, "no JavaScript error", errs.join(" | "));
});
