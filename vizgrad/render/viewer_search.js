/* vizgrad's viewer: search by op, tensor name, scope or file.py:42, and its result list
 * (in the search box Enter jumps to the first hit, ArrowDown enters the list, arrows
 * walk it).  What it needs from the page comes in ctx: data, nodes, results (the list
 * element), search (the input), add(parent, tag, text, cls) and jump(id) (show a hit
 * as its own box).  User text is only ever shown with textContent. */
window.vizgradSearch = function (ctx) {
  "use strict";
  var data = ctx.data, nodes = ctx.nodes, results = ctx.results, search = ctx.search;
  var add = ctx.add, jump = ctx.jump;

  var index = null;
  function buildIndex() {
    index = data.graph.nodes.map(function (n) {
      var extra = data.extra[n.id] || {}, d = n.details || {};
      var places = extra.stack === undefined ? [] : data.stacks[extra.stack].map(function (f) {
        var frame = data.frames[f];
        return (frame[0] + ":" + frame[1]).toLowerCase();
      });
      var text = [n.title, d.name || "", n.scope, n.kind, n.id].join("\u0000").toLowerCase();
      return { id: n.id, text: text, places: places };
    });
  }
  function find(query) {
    if (!index) { buildIndex(); }
    var q = query.trim().toLowerCase();
    if (!q) { return []; }
    var line = /^(.*[^\d]):(\d+)$/.exec(q);
    return index.filter(function (entry) {
      if (line) {
        return entry.places.some(function (p) {
          var i = p.lastIndexOf(":");
          return p.slice(i + 1) === line[2] && (p.slice(0, i) === line[1] ||
            p.slice(0, i).endsWith("/" + line[1]) || p.slice(0, i).endsWith("\\" + line[1]));
        });
      }
      return entry.text.indexOf(q) >= 0;
    }).map(function (entry) { return entry.id; });
  }
  function showResults(query) {
    results.textContent = "";
    var hits = find(query);
    if (!query.trim()) { return hits; }
    add(results, "p", hits.length + " match" + (hits.length === 1 ? "" : "es") +
        (hits.length > 200 ? " (first 200 listed)" : ""), "vg-count");
    hits.slice(0, 200).forEach(function (id) {
      var b = add(results, "button", null, "vg-result");
      b.type = "button"; b.setAttribute("role", "listitem"); b.dataset.id = id;
      var n = nodes[id], extra = data.extra[id] || {};
      add(b, "b", n.title || n.kind);
      if (n.scope) { add(b, "span", " " + n.scope, "vg-scope"); }
      if (extra.stack !== undefined) {
        var frames = data.stacks[extra.stack], f = data.frames[frames[frames.length - 1]];
        add(b, "span", " " + f[0].split(/[\\/]/).pop() + ":" + f[1], "vg-where");
      }
      b.addEventListener("click", function () { jump(id); });
    });
    return hits;
  }
  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { showResults(search.value); }, 120);
  });
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      clearTimeout(timer);
      var hits = showResults(search.value);
      if (hits.length) { jump(hits[0]); }
    } else if (event.key === "ArrowDown") {
      clearTimeout(timer);
      showResults(search.value);
      var first = results.querySelector("button");
      if (first) { event.preventDefault(); first.focus(); }
    }
  });
  results.addEventListener("keydown", function (event) {    // arrows walk the list
    var items = Array.prototype.slice.call(results.querySelectorAll("button"));
    var at = items.indexOf(document.activeElement);
    if (at < 0 || (event.key !== "ArrowDown" && event.key !== "ArrowUp")) { return; }
    event.preventDefault();
    event.stopPropagation();
    if (event.key === "ArrowUp" && at === 0) { search.focus(); return; }
    var next = items[at + (event.key === "ArrowDown" ? 1 : -1)];
    if (next) { next.focus(); }
  });
  return { find: find, showResults: showResults };
};
