// Sortable tables: a click on a header cell sorts its table by that column
// (numbers as numbers), a second click reverses. Tables read fine without it.
// Tables whose row order means something (an answer diff, a timeline) are
// marked "nosort" and left alone.
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
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
      cell.setAttribute("data-order", descending ? "desc" : "asc");
    });
  });
});
