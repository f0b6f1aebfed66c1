// Opens generated pages in real headless Chromium (through playwright-core)
// from file:// and reports, as JSON on stdout, what a reader's browser saw:
// console errors and warnings, uncaught exceptions, Content-Security-Policy
// violations, whether injected text ran as script, whether the page's own
// sort script ran, what one click on a header did to a table, and what
// the search box found for each query typed into it.
//
//   node tests/browser/check.js SPEC.json
//
// SPEC: {
//   "chromium": "/usr/bin/chromium",
//   "pages": [{ "name": "index", "path": "/abs/site/index.html",
//               "sort": { "table": 1, "column": 0 },       // optional
//               "search": ["query", ...],                   // optional
//               "wait_ms": 1500 }],                         // optional
//   "screenshots": "/abs/dir",                               // optional
//   "layout": { "widths": [1280, 390], "pages": ["root"] },  // optional
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
  // A page that might send the reader elsewhere (`<meta http-equiv=
  // "refresh">`) is given the time to do it before it is looked at.
  if (entry.wait_ms) {
    await page.waitForTimeout(entry.wait_ms);
    await page.waitForLoadState("load");
  }
  const state = await page.evaluate(() => ({
    url: location.href,
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
    // Every figure (an inline SVG drawn as one, an image) and what its
    // title says: an SVG's <title> or aria-label, an image's alt.
    figures: Array.prototype.filter
      .call(document.querySelectorAll("svg, img"), (e) => e.tagName.toLowerCase() === "img" || !e.parentElement.closest("svg"))
      .map((e) => {
        const title = e.tagName.toLowerCase() === "img"
          ? e.getAttribute("alt") || ""
          : (e.querySelector(":scope > title") ? e.querySelector(":scope > title").textContent : "") || e.getAttribute("aria-label") || "";
        return title.trim();
      }),
    // Text a reader sees in headings, tables and figure titles.
    shown_text: Array.prototype.map
      .call(document.querySelectorAll("h1, h2, h3, h4, th, td, svg title, figcaption, p strong"), (e) => e.textContent)
      .join("\n"),
    // Tables wider than their box (they would scroll sideways).
    scrolling_tables: Array.prototype.filter
      .call(document.querySelectorAll("table"), (t) => t.scrollWidth > t.clientWidth + 1).length,
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
  // Each query typed into the search box (which loads the site's index
  // on first use): the status line and every result's link and text.
  let searches = null;
  if (entry.search && scheme === "light") {
    searches = [];
    for (const query of entry.search) {
      await page.evaluate(() => {
        const s = document.querySelector(".search-status");
        if (s) s.textContent = "";
      });
      await page.locator(".search input").fill(query);
      await page.waitForFunction(
        () => {
          const s = document.querySelector(".search-status");
          return s && / match\.| could not be loaded|another format/.test(s.textContent);
        },
        null,
        { timeout: 15000 }
      );
      const found = await page.evaluate(() => ({
        status: document.querySelector(".search-status").textContent,
        results: Array.prototype.map.call(document.querySelectorAll(".search-results li"), (li) => {
          const a = li.querySelector("a");
          return { href: a ? a.href : null, text: li.textContent };
        }),
        scripts: document.scripts.length,
        pwned: window.__pwned === undefined ? null : String(window.__pwned),
        injected_elements: document.querySelectorAll("img[src='x'], [onerror], [onload]").length,
      }));
      searches.push(Object.assign({ query }, found));
    }
  }
  // How the page's tables fit at each width asked for: per table, whether
  // it scrolls sideways, whether its first column stays in view, the
  // tallest header in lines, and the number cells whose text wrapped.
  let layout = null;
  if (spec.layout && spec.layout.pages.includes(entry.name) && scheme === "light") {
    layout = [];
    for (const width of spec.layout.widths) {
      await page.setViewportSize({ width, height: 900 });
      const tables = await page.evaluate(() =>
        Array.prototype.map.call(document.querySelectorAll("table"), (t) => {
          const first = t.querySelector("tbody td");
          // A header's lines: the distinct tops of its text's line boxes
          // (what is clamped away is not shown, and not counted).
          const heads = Array.prototype.map.call(t.querySelectorAll("thead th"), (th) => {
            const inner = th.querySelector("span") || th;
            const box = inner.getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(inner);
            const tops = new Set(
              Array.prototype.filter
                .call(range.getClientRects(), (r) => r.width > 0 && r.bottom <= box.bottom + 1)
                .map((r) => Math.round(r.top))
            );
            return tops.size;
          });
          // A header whose text is cut off (clamped, hidden): nothing is.
          const clamped = Array.prototype.filter.call(t.querySelectorAll("thead th"), (th) => {
            const inner = th.querySelector("span") || th;
            return inner.scrollHeight > inner.clientHeight + 1 || inner.scrollWidth > inner.clientWidth + 1;
          }).map((th) => th.textContent);
          const wrapped = Array.prototype.filter.call(t.querySelectorAll("td.num, td[style*='text-align: right']"), (td) => {
            const range = document.createRange();
            range.selectNodeContents(td);
            const tops = new Set(Array.prototype.map.call(range.getClientRects(), (r) => Math.round(r.top)));
            return tops.size > 1;
          }).map((td) => td.textContent);
          return {
            columns: t.querySelectorAll("thead th").length,
            scrolls: t.scrollWidth > t.clientWidth,
            sticky_first: first ? getComputedStyle(first).position === "sticky" : null,
            header_lines: heads.length ? Math.max.apply(null, heads) : 0,
            clamped,
            long_headers_titled: Array.prototype.every.call(t.querySelectorAll("th.long"), (th) => th.title.length > 0),
            wrapped,
          };
        })
      );
      const overflow_x = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (spec.screenshots) {
        await page.screenshot({ path: path.join(spec.screenshots, `${entry.name}-${width}.png`), fullPage: false });
      }
      layout.push({ width, overflow_x, tables });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
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
  return Object.assign({ name: entry.name, scheme, url }, seen, state, { sort, layout, searches });
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
