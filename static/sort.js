// Sortable tables: a click on a header cell sorts its table by that column
// (numbers as numbers), a second click reverses. Tables read fine without it.
// Tables whose row order means something (an answer diff, a timeline) are
// marked "nosort" and left alone.
// The number a cell starts with: "−0.08" (a true minus), "+0.19", "72%",
// "0.56–0.84" (its low end), "2/3" (as a fraction); null when none.
function numberOf(text) {
  var t = text.trim().replace(/\u2212/g, "-");
  var m = t.match(/^([+-]?\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)$/);
  if (m) return parseFloat(m[2]) ? parseFloat(m[1]) / parseFloat(m[2]) : 0;
  m = t.match(/^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/);
  return m ? parseFloat(m[0]) : null;
}

document.querySelectorAll("table:not(.nosort)").forEach(function (table) {
  var head = table.tHead || (table.rows.length ? { rows: [table.rows[0]] } : null);
  if (!head || !table.tBodies.length) return;
  Array.prototype.forEach.call(head.rows[0].cells, function (cell, index) {
    cell.classList.add("sortable");
    cell.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var descending = cell.getAttribute("data-order") === "asc";
      rows.sort(function (a, b) {
        var x = (a.cells[index] || {}).textContent || "";
        var y = (b.cells[index] || {}).textContent || "";
        var nx = numberOf(x), ny = numberOf(y);
        // Numbers by value, then text; a cell without a number ("—")
        // after every number, in either direction.
        var order;
        if (nx !== null && ny !== null) order = nx - ny;
        else if (nx !== null) return -1;
        else if (ny !== null) return 1;
        else order = x.localeCompare(y);
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
      cell.setAttribute("data-order", descending ? "desc" : "asc");
    });
  });
});

// The search box of a site page: its index, a script file of the site
// (site/search-index.js, which carries the search itself after its data),
// is loaded when the box is first used, so a page costs nothing until then.
document.querySelectorAll("[data-search-index]").forEach(function (box) {
  var input = box.querySelector("input");
  var status = box.querySelector(".search-status");
  if (!input) return;
  function load() {
    if (box.hasAttribute("data-state")) return;
    box.setAttribute("data-state", "loading");
    if (status) status.textContent = "Loading the search index…";
    var script = document.createElement("script");
    script.src = box.getAttribute("data-search-index");
    script.onerror = function () {
      box.setAttribute("data-state", "failed");
      if (status) status.textContent = "The search index could not be loaded (" +
        box.getAttribute("data-search-index") + "): run okn-benchmark build.";
    };
    document.body.appendChild(script);
  }
  input.addEventListener("focus", load);
  input.addEventListener("input", load);
});
