// The site's search (docs/PUBLISHING.md, "Search"). It comes after the
// data in site/search-index.js (window.oknSearchIndex, format 1: see
// src/render/search.rs) and runs when a page's search box loads that
// file. Every term typed must occur (in any case, accents aside: both
// sides are folded by `fold`) in some field of a
// result: a question's id, prose, answer key or root; an attempt's
// question id, root, condition, verdict, tools, SPARQL or answer.
// Results are built with textContent only: recorded text is never HTML.
(function () {
  var index = window.oknSearchIndex;
  var boxes = document.querySelectorAll("[data-search-index]");
  if (!index || index.format !== 1) {
    boxes.forEach(function (box) {
      box.setAttribute("data-state", "failed");
      var status = box.querySelector(".search-status");
      if (status) status.textContent = "The search index is of another format: run okn-benchmark build.";
    });
    return;
  }
  var QUESTIONS_SHOWN = 20;
  var ATTEMPTS_SHOWN = 30;
  var strings = index.strings;
  // A text as it is matched: decomposed (NFD), combining marks dropped,
  // lower case; so "İstanbul" is found by "istanbul" and an "é" written
  // as "e" and a combining accent by "é".
  function fold(s) {
    return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }
  var lower = strings.map(fold);
  var questions = index.questions.map(function (q) {
    return { root: q[0], id: q[1], text: q[2], key: q[3], page: q[4],
             fields: [q[1], q[0], q[2]].concat(q[3] >= 0 ? [q[3]] : []) };
  });
  var attempts = index.attempts.map(function (a) {
    var q = questions[a[0]];
    return { question: q, label: a[1], folder: a[2], n: a[3], verdict: a[4],
             fields: [q.id, q.root, a[1], a[4]].concat(a[5], a[6], a[7] >= 0 ? [a[7]] : []) };
  });

  // Where each term occurs (its first field holding it, and where), when
  // every term occurs in some field; null when one does not.
  function match(fields, terms) {
    var hits = [];
    for (var t = 0; t < terms.length; t++) {
      var hit = null;
      for (var f = 0; f < fields.length && !hit; f++) {
        var at = lower[fields[f]].indexOf(terms[t]);
        if (at >= 0) hit = { field: fields[f], at: at, length: terms[t].length };
      }
      if (!hit) return null;
      hits.push(hit);
    }
    return hits;
  }

  // The snippet of the first hit outside what a result's title shows
  // (the first `shown` fields); "" when every hit is in the title.
  function context(hits, fields, shown) {
    for (var i = 0; i < hits.length; i++) {
      if (fields.indexOf(hits[i].field) >= shown) return snippet(hits[i]);
    }
    return "";
  }

  // Up to 120 characters of a field around a match, never splitting a
  // character made of two UTF-16 units.
  function snippet(hit) {
    var s = strings[hit.field];
    var at = /[^\x00-\x7f]/.test(s) ? originalAt(s, hit.at) : hit.at;
    var start = Math.max(0, at - 40);
    var end = Math.min(s.length, Math.max(at + hit.length, start) + 80);
    var low = function (i) { var c = s.charCodeAt(i); return c >= 0xdc00 && c <= 0xdfff; };
    if (start > 0 && low(start)) start++;
    if (end < s.length && low(end)) end++;
    return (start > 0 ? "…" : "") + s.slice(start, end) + (end < s.length ? "…" : "");
  }

  // Where, in `s`, the character that folds to position `at` of its
  // folded text is (folding can change a text's length: "İ", accents).
  function originalAt(s, at) {
    var folded = 0;
    for (var i = 0; i < s.length;) {
      var ch = String.fromCodePoint(s.codePointAt(i));
      var n = fold(ch).length;
      if (folded + n > at) return i;
      folded += n;
      i += ch.length;
    }
    return s.length;
  }

  function item(list, href, title, detail, text) {
    var li = document.createElement("li");
    var a = document.createElement("a");
    a.href = href;
    a.textContent = title;
    li.appendChild(a);
    if (detail) {
      var d = document.createElement("span");
      d.className = "muted";
      d.textContent = " " + detail;
      li.appendChild(d);
    }
    if (text) {
      var p = document.createElement("div");
      p.className = "search-snippet";
      p.textContent = text;
      li.appendChild(p);
    }
    list.appendChild(li);
  }

  function more(list, count, what) {
    if (count <= 0) return;
    var li = document.createElement("li");
    li.className = "muted";
    li.textContent = count + " more " + what + ": add a word to narrow the search";
    list.appendChild(li);
  }

  function search(box) {
    var input = box.querySelector("input");
    var list = box.querySelector(".search-results");
    var status = box.querySelector(".search-status");
    var base = box.getAttribute("data-search-index").replace(/search-index\.js$/, "");
    var terms = fold(input.value).split(/\s+/).filter(Boolean);
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!terms.length) {
      status.textContent = "";
      return;
    }
    var qHits = 0, aHits = 0;
    questions.forEach(function (q) {
      var hits = match(q.fields, terms);
      if (!hits) return;
      qHits++;
      if (qHits <= QUESTIONS_SHOWN) {
        item(list, base + strings[q.page], strings[q.root] + " › " + strings[q.id], "question",
             context(hits, q.fields, 2) || snippet({ field: q.text, at: 0, length: 0 }));
      }
    });
    more(list, qHits - QUESTIONS_SHOWN, "questions");
    attempts.forEach(function (a) {
      var hits = match(a.fields, terms);
      if (!hits) return;
      aHits++;
      if (aHits <= ATTEMPTS_SHOWN) {
        var q = a.question;
        item(list, base + strings[a.folder] + "attempt-" + a.n + ".html",
             strings[q.root] + " › " + strings[q.id] + " › " + strings[a.label] + " · attempt " + a.n,
             strings[a.verdict], context(hits, a.fields, 4));
      }
    });
    more(list, aHits - ATTEMPTS_SHOWN, "attempts");
    var plural = function (n, one, many) { return n + " " + (n === 1 ? one : many); };
    var text = plural(qHits, "question", "questions") + " and " +
      plural(aHits, "attempt", "attempts") + " match.";
    if (index.left_out > 0) {
      text += " The index leaves out " + plural(index.left_out, "text", "texts") +
        " (answer keys, SPARQL or answers) past its size cap of " +
        Math.round(index.budget / 1048576) + " MiB.";
    }
    status.textContent = text;
  }

  boxes.forEach(function (box) {
    var input = box.querySelector("input");
    if (!input) return;
    var timer = null;
    box.setAttribute("data-state", "ready");
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { search(box); }, 80);
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Escape") {
        input.value = "";
        search(box);
      } else if (event.key === "Enter") {
        var first = box.querySelector(".search-results a");
        if (first) window.location.href = first.href;
      }
    });
    search(box);
  });
})();
