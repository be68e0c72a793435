// browser.js BASE_URL SCREENSHOT [store] - the web page in headless Chromium
// (Debian's, through playwright-core): compare two texts and check what the
// page shows against the API's own answer (fingerprints, distance, the number
// of red cells in the bit grid); with a store, search and find a document
// whose id, title and metadata hold markup, shown as text and never run; add
// a document through the form. Prints "browser: N passed, N failed".
"use strict";
const { chromium } = require("playwright-core");

const [base, shot, withStore] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(cond, what, detail) {
  if (cond) passed++;
  else { failed++; console.log(`FAIL browser: ${what} ${detail === undefined ? "" : JSON.stringify(detail)}`); }
}

async function post(path, body) {
  const r = await fetch(base + path, { method: "POST", headers: { "Content-Type": "application/json" },
                                       body: JSON.stringify(body) });
  return { status: r.status, data: await r.json() };
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => { errors.push("dialog: " + d.message()); d.dismiss(); });

  const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  if (withStore) {
    const r = await post("/v1/documents", { id: "<b>evil</b>", text: "the quick brown fox jumps over the lazy dog",
                                            meta: { title: evil, url: "javascript:alert(1)" } });
    check(r.status === 201, "seed document", r);
    await post("/v1/documents", { id: "far", text: "nothing in common with foxes or dogs at all" });
  }

  await page.goto(base + "/");
  check((await page.title()) === "simhash", "page title");

  const a = "the quick brown fox jumps over the lazy dog";
  const b = "the quick brown fox jumped over the lazy dogs";
  await page.fill("#text-a", a);
  await page.fill("#text-b", b);
  await page.click("#compare-button");
  await page.waitForSelector("#compare-result:not([hidden])");
  const want = (await post("/v1/compare", { a, b })).data;
  check((await page.textContent("#fp-a")) === want.a, "fingerprint A shown", want.a);
  check((await page.textContent("#fp-b")) === want.b, "fingerprint B shown", want.b);
  check((await page.textContent("#distance")) === `${want.distance} of 64 bits`, "distance shown",
        await page.textContent("#distance"));
  check((await page.textContent("#similarity")) === want.similarity.toFixed(4), "similarity shown");
  check((await page.textContent("#cosine")) === want.cosine.toFixed(4), "cosine shown");
  check((await page.textContent("#jaccard")) === want.jaccard.toFixed(4), "jaccard shown");
  check((await page.locator("#bit-grid .bit").count()) === 64, "64 cells in the bit grid");
  check((await page.locator("#bit-grid .bit.diff").count()) === want.distance,
        "differing cells equal the distance", await page.locator("#bit-grid .bit.diff").count());

  if (withStore) {
    await page.fill("#search-text", a);
    await page.fill("#search-k", "10");
    await page.click("#search-button");
    await page.waitForSelector("#search-results:not([hidden])");
    const rows = page.locator("#search-results tbody tr");
    check((await rows.count()) === 1, "one near-duplicate found", await rows.count());
    check((await rows.first().locator("td.id").textContent()) === "<b>evil</b>", "id shown as text");
    check((await rows.first().locator("td.title").textContent()) === evil, "title shown as text");
    check((await page.locator("#search-results img, #search-results script, #search-results b").count()) === 0,
          "no markup from the store in the page");
    check((await page.evaluate(() => window.__pwned)) === undefined, "no stored script ran");

    await page.fill("#add-id", "from-the-page");
    await page.fill("#add-title", "Added <i>here</i>");
    await page.fill("#add-text", "a brand new text typed into the page");
    await page.click("#add-button");
    await page.waitForFunction(() => document.getElementById("add-result").textContent.startsWith("Added"));
    const got = await fetch(base + "/v1/documents/from-the-page").then((r) => r.json());
    check(got.meta && got.meta.title === "Added <i>here</i>", "the page added a document", got);
    await page.fill("#search-text", a);
  }
  check(errors.length === 0, "no page errors or dialogs", errors);
  await page.screenshot({ path: shot, fullPage: true });
  await browser.close();
}

main().then(() => {
  console.log(`browser: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}, (e) => {
  console.log(`FAIL browser: ${e && e.stack || e}`);
  console.log(`browser: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
