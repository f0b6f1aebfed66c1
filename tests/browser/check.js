// Opens generated pages in real headless Chromium (through playwright-core)
// from file:// and reports, as JSON on stdout, what a reader's browser saw:
// console errors and warnings, uncaught exceptions, Content-Security-Policy
// violations, whether injected text ran as script, whether the page's own
// sort script ran, and what one click on a header did to a table.
//
//   node tests/browser/check.js SPEC.json
//
// SPEC: {
//   "chromium": "/usr/bin/chromium",
//   "pages": [{ "name": "index", "path": "/abs/site/index.html",
//               "sort": { "table": 1, "column": 0 } }],      // sort optional
//   "screenshots": "/abs/dir",                               // optional
//   "schemes": ["light", "dark"]                             // optional
// }
//
// playwright-core is found through NODE_PATH (the Rust test points it at
// target/test-tools/node_modules, where scripts/test installs it).
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const { pathToFileURL } = require("url");

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

// Never hang a test run: whatever happens, give up after two minutes.
const watchdog = setTimeout(() => {
  process.stderr.write("check.js: gave up after 120 s\n");
  process.exit(3);
}, 120000);

// Recorded in every page before its own script runs (init scripts are
// added by the browser, not by the page, so the page's policy allows them).
const RECORDER = `
  window.__okn = { csp: [] };
  document.addEventListener("securitypolicyviolation", function (e) {
    window.__okn.csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") +
      " at " + (e.sourceFile || "") + ":" + e.lineNumber);
  });
`;

async function columnOf(page, table, column) {
  return page.evaluate(
    ([t, c]) => {
      const tables = document.querySelectorAll("table");
      const body = tables[t] && tables[t].tBodies[0];
      if (!body) return null;
      return Array.prototype.map.call(body.rows, (r) =>
        r.cells[c] ? r.cells[c].textContent.trim() : ""
      );
    },
    [table, column]
  );
}

async function visit(context, entry, scheme) {
  const page = await context.newPage();
  await page.emulateMedia({ colorScheme: scheme });
  const seen = { console_errors: [], console_warnings: [], page_errors: [], failed_requests: [] };
  page.on("console", (msg) => {
    const where = msg.location();
    const text = `${msg.text()} (${where.url || ""}:${where.lineNumber})`;
    if (msg.type() === "error") seen.console_errors.push(text);
    else if (msg.type() === "warning") seen.console_warnings.push(text);
  });
  page.on("pageerror", (err) => seen.page_errors.push(String(err && err.stack ? err.stack : err)));
  page.on("requestfailed", (req) =>
    seen.failed_requests.push(`${req.url()}: ${req.failure() ? req.failure().errorText : "failed"}`)
  );
  const url = pathToFileURL(entry.path).href;
  await page.goto(url, { waitUntil: "load" });
  const state = await page.evaluate(() => ({
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    title: document.title,
    scripts: document.scripts.length,
    injected_elements: document.querySelectorAll("img[src='x'], [onerror], [onload]").length,
    shows_planted: document.body.textContent.includes("window.__pwned=1"),
    svgs: document.querySelectorAll("svg").length,
    tables: document.querySelectorAll("table").length,
    sortable_headers: document.querySelectorAll("th.sortable").length,
    csp_violations: window.__okn ? window.__okn.csp.slice() : ["recorder missing"],
    overflow_x: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  }));
  let sort = null;
  if (entry.sort && scheme === "light") {
    const { table, column } = entry.sort;
    const header = page.locator("table").nth(table).locator("tr").first().locator("th").nth(column);
    const before = await columnOf(page, table, column);
    await header.click();
    const first = await columnOf(page, table, column);
    const first_order = await header.getAttribute("data-order");
    await header.click();
    const second = await columnOf(page, table, column);
    const second_order = await header.getAttribute("data-order");
    sort = { before, first, first_order, second, second_order };
  }
  if (spec.screenshots) {
    await page.screenshot({
      path: path.join(spec.screenshots, `${entry.name}-${scheme}.png`),
      fullPage: true,
    });
  }
  // Late errors (from the clicks) are part of the page's record too.
  state.csp_violations = await page.evaluate(() => window.__okn.csp.slice());
  await page.close();
  return Object.assign({ name: entry.name, scheme, url }, seen, state, { sort });
}

async function main() {
  const { chromium } = require("playwright-core");
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), "okn-chromium-"));
  const args = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
  ];
  const results = [];
  // One browser for every page, with a fresh profile folder of our own
  // (removed below); the colour scheme is emulated per page.
  const context = await chromium.launchPersistentContext(userData, {
    executablePath: spec.chromium,
    headless: true,
    args,
    viewport: { width: 1280, height: 900 },
    offline: true,
  });
  try {
    await context.addInitScript(RECORDER);
    for (const scheme of spec.schemes || ["light"]) {
      for (const entry of spec.pages) {
        results.push(await visit(context, entry, scheme));
      }
    }
  } finally {
    await context.close().catch(() => {});
    fs.rmSync(userData, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify({ pages: results }, null, 1) + "\n");
}

main().then(
  () => clearTimeout(watchdog),
  (err) => {
    process.stderr.write(`check.js: ${err && err.stack ? err.stack : err}\n`);
    process.exit(2);
  }
);
