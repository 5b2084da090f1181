/* vizgrad's graph viewer: pan/zoom, minimap, search, details, paths, fold levels.
 * Written for vizgrad (no library, no network). Data: the JSON block #vizgrad-data
 * (docs/json_schema.md plus "extra" facts per node and one entry per fold level).
 * User text is only ever shown with textContent. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("vizgrad-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var canvas = $("vg-canvas"), minimap = $("vg-minimap"), details = $("vg-details");
  var results = $("vg-results"), search = $("vg-search"), status = $("vg-status");
  var levelSelect = $("vg-level"), pathsBox = $("vg-paths");

  /* ---- the full graph: nodes by id, edges in and out ---- */
  var nodes = {}, inEdges = {}, outEdges = {};
  data.graph.nodes.forEach(function (n) { nodes[n.id] = n; inEdges[n.id] = []; outEdges[n.id] = []; });
  data.graph.edges.forEach(function (e) {
    if (inEdges[e.target]) { inEdges[e.target].push(e); }
    if (outEdges[e.source]) { outEdges[e.source].push(e); }
  });
  var levels = data.levels;
  levels.forEach(function (level) {        // full node id -> the box that draws it
    level.drawn = !!level.layout;
    level.owner = {};
    var hidden = level.hidden; level.hidden = {};
    hidden.forEach(function (id) { level.hidden[id] = true; });
    Object.keys(level.boxes).forEach(function (box) {
      (level.boxes[box].details.members || []).forEach(function (m) { level.owner[m] = box; });
    });
  });

  /* ---- theme: follow the system unless the page was saved dark ---- */
  var root = document.documentElement;
  if (!root.classList.contains("vg-forced") && window.matchMedia) {
    var scheme = window.matchMedia("(prefers-color-scheme: dark)");
    var applyScheme = function () { root.classList.toggle("vg-dark", scheme.matches); };
    applyScheme();
    if (scheme.addEventListener) { scheme.addEventListener("change", applyScheme); }
  }

  /* ---- levels: one Graphviz SVG each; the DOM keeps only the current one ---- */
  var current = -1, svg = null, graphBox = null, levelNodes = {}, succ = {}, pred = {};
  var edgeEls = [], elements = [];
  var svgCache = {};
  svgCache[data.start] = canvas.querySelector("svg.vg-graph");

  function svgOf(index) {
    var level = levels[index];
    if (!svgCache[index] && (level.svg || level.layout === "page")) {
      var holder = document.createElement("div");
      holder.innerHTML = level.svg || layOut(level);  // Graphviz's SVG or our own
      svgCache[index] = holder.querySelector("svg");
      level.svg = null;                                // parsed once; free the text
    }
    return svgCache[index] || null;
  }

  /* Text is what makes a big drawing slow (shaping 20,000 labels takes seconds), so a
   * page layout gets its labels only where the reader looks, once zoomed in enough. */
  var labelTimer = null;
  function labelVisible() {
    var map = levels[current] && levels[current].map;
    if (!map || cam.k < 0.3) { return; }
    var x0 = cam.x, y0 = cam.y, x1 = x0 + canvas.clientWidth / cam.k, y1 = y0 + canvas.clientHeight / cam.k;
    for (var i = 0; i < map.n; i++) {
      if (map.labelled[i] || map.x[i] + map.w[i] / 2 < x0 || map.x[i] - map.w[i] / 2 > x1 ||
          map.y[i] + map.h[i] / 2 < y0 || map.y[i] - map.h[i] / 2 > y1) { continue; }
      map.labelled[i] = 1;
      var top = map.y[i] - map.h[i] / 2, text = [];
      for (var j = 0; j < map.label[i].length; j++) {
        text.push('<text text-anchor="middle" x="', map.x[i], '" y="', top + 14 + 12 * j,
                  '" font-family="monospace" font-size="10.00">', esc(map.label[i][j]), "</text>");
      }
      levelNodes[map.ids[i]].insertAdjacentHTML("beforeend", text.join(""));
    }
  }

  /* ---- a level too big for Graphviz, laid out here: layered, linear time ----
   * Rank: as late as possible (the longest path down to an output decides, so a
   * node sits one row above its highest consumer and a leaf beside the op using it).  Order and x: three barycentre
   * passes (down by producers, up by consumers, down again), each row packed
   * left to right at its wanted x and shifted back to centre on it.  Edges are
   * curves without routing: good enough to read a 20,000-node graph's shape, and
   * every box is searchable, selectable and highlighted like Graphviz's. */
  var FILL = { op: "lightgray", leaf: "lightblue", saved: "orange", output: "#caff70",
               base: "#a2cd5a", fold: "#ffe9a8", group: "#e3d5f2" };
  function esc(text) {
    return String(text).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
  }
  function layOut(level) {
    var ids = level.ids || data.graph.nodes.map(function (n) { return n.id; });
    var pairs = level.edges || data.graph.edges.map(function (e) { return [e.source, e.target]; });
    var n = ids.length, at = {}, ins = [], outs = [], i, j, r;
    for (i = 0; i < n; i++) { at[ids[i]] = i; ins.push([]); outs.push([]); }
    pairs.forEach(function (p) {
      var a = at[p[0]], b = at[p[1]];
      if (a !== undefined && b !== undefined && a !== b) { outs[a].push(b); ins[b].push(a); }
    });
    var left = new Int32Array(n), order = [];   // reverse topological order (Kahn, from sinks)
    for (i = 0; i < n; i++) { left[i] = outs[i].length; if (!left[i]) { order.push(i); } }
    for (j = 0; j < order.length; j++) {
      ins[order[j]].forEach(function (u) { if (--left[u] === 0) { order.push(u); } });
    }
    var depth = new Int32Array(n), deepest = 0;  // longest path down to a sink
    order.forEach(function (v) {
      outs[v].forEach(function (w) { depth[v] = Math.max(depth[v], depth[w] + 1); });
      deepest = Math.max(deepest, depth[v]);
    });
    var rows = [];
    for (r = 0; r <= deepest; r++) { rows.push([]); }
    for (j = order.length - 1; j >= 0; j--) { rows[deepest - depth[order[j]]].push(order[j]); }
    var label = [], w = new Float64Array(n), h = new Float64Array(n), x = new Float64Array(n);
    for (i = 0; i < n; i++) {
      var node = nodes[ids[i]] || level.boxes[ids[i]] || {};
      var lines = [node.title || ""].concat(node.lines || []).filter(function (t) { return t; });
      label.push(lines);
      w[i] = 16 + 6.1 * Math.max.apply(null, lines.map(function (t) { return t.length; }).concat([2]));
      h[i] = 8 + 12 * Math.max(lines.length, 1);
    }
    rows.forEach(function (row) {
      var cursor = 0;
      row.forEach(function (v) { x[v] = cursor + w[v] / 2; cursor += w[v] + 12; });
    });
    function pass(row, near) {
      var want = row.map(function (v) {
        var list = near[v];
        if (!list.length) { return x[v]; }
        var sum = 0;
        list.forEach(function (u) { sum += x[u]; });
        return sum / list.length;
      });
      var byWant = row.map(function (v, k) { return k; });
      byWant.sort(function (a, b) { return want[a] - want[b]; });
      var placed = byWant.map(function (k) { return row[k]; }), shift = 0, edge = -Infinity;
      byWant.forEach(function (k, m) {
        var v = row[k];
        x[v] = Math.max(want[k], edge + w[v] / 2 + 12);
        edge = x[v] + w[v] / 2;
        shift += want[k] - x[v];
        placed[m] = v;
      });
      shift /= Math.max(row.length, 1);
      placed.forEach(function (v) { x[v] += shift; });
      return placed;
    }
    for (r = 1; r < rows.length; r++) { rows[r] = pass(rows[r], ins); }
    for (r = rows.length - 2; r >= 0; r--) { rows[r] = pass(rows[r], outs); }
    for (r = 1; r < rows.length; r++) { rows[r] = pass(rows[r], ins); }
    var y = new Float64Array(n), top = 0, minX = Infinity, maxX = -Infinity;
    rows.forEach(function (row) {
      var tallest = 0;
      row.forEach(function (v) {
        tallest = Math.max(tallest, h[v]);
        minX = Math.min(minX, x[v] - w[v] / 2); maxX = Math.max(maxX, x[v] + w[v] / 2);
      });
      row.forEach(function (v) { y[v] = top + tallest / 2; });
      top += tallest + 36;
    });
    // As few elements as will do (no <title>s, one shared arrowhead): a 20,000-box
    // level is ~100,000 elements, and style and layout time grow with the count.
    level.map = { x: x, y: y, w: w, h: h, n: n, box: [minX - 8, -8, maxX - minX + 16, top],
                  ids: ids, label: label, labelled: new Uint8Array(n) };
    var out = ['<svg class="vg-graph" viewBox="', level.map.box.join(" "),
               '"><defs><marker id="vg-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" ',
               'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto"><path d="M0 0L8 4L0 8z" fill="black" stroke="black"/>',
               '</marker></defs><g class="graph"><polygon fill="white" stroke="transparent" points="',
               [minX - 8, -8, maxX + 8, -8, maxX + 8, top - 8, minX - 8, top - 8].join(" "), '"/>'];
    pairs.forEach(function (p) {
      var a = at[p[0]], b = at[p[1]];
      if (a === undefined || b === undefined || a === b) { return; }
      var x1 = x[a], y1 = y[a] + h[a] / 2, x2 = x[b], y2 = y[b] - h[b] / 2, mid = (y1 + y2) / 2;
      out.push('<path class="edge" data-ends="', esc(p[0] + "->" + p[1]), '" fill="none" ',
               'stroke="black" marker-end="url(#vg-arrow)" d="M', x1, " ", y1, "C", x1, " ", mid,
               " ", x2, " ", mid, " ", x2, " ", y2, '"/>');
    });
    for (i = 0; i < n; i++) {
      var kind = (nodes[ids[i]] || level.boxes[ids[i]] || {}).kind;
      var fill = (nodes[ids[i]] || {}).fill || FILL[kind] || FILL.op;
      var x0 = x[i] - w[i] / 2, y0 = y[i] - h[i] / 2;
      out.push('<g id="', esc(ids[i]), '" class="node"><polygon fill="',
               esc(fill), '" stroke="black" points="', [x0, y0, x0 + w[i], y0, x0 + w[i], y0 + h[i], x0,
               y0 + h[i]].join(" "), '"/>');
      out.push("</g>");
    }
    out.push("</g></svg>");
    return out.join("");
  }

  function titleOf(el) {                     // an edge's "source->target"
    var ends = el.getAttribute("data-ends");   // our layout; Graphviz writes a <title>
    if (ends !== null) { return ends; }
    var title = el.querySelector("title");
    return title ? title.textContent : "";
  }

  function useLevel(index, keep) {
    var next = svgOf(index);
    if (!next) { return false; }
    if (selected && !nodes[selected]) {      // a box of the old level: keep its first member
      var old = levels[current].boxes[selected];
      selected = old && old.details.members ? old.details.members[0] : null;
    }
    if (svg) { svg.remove(); }
    canvas.appendChild(next);
    svg = next; current = index; levelSelect.value = String(index);
    if (!svg.vgBox) {                        // Graphviz's box; the camera rewrites viewBox
      var box = svg.viewBox.baseVal;
      svg.vgBox = { x: box.x, y: box.y, w: box.width || 1, h: box.height || 1 };
    }
    graphBox = svg.vgBox;
    levelNodes = {}; succ = {}; pred = {}; edgeEls = [];
    elements = Array.prototype.slice.call(svg.querySelectorAll("g.node"));
    elements.forEach(function (el) {
      levelNodes[el.id] = el; succ[el.id] = []; pred[el.id] = [];
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "button");
      el.setAttribute("aria-label", labelOf(el.id));
    });
    svg.querySelectorAll(".edge").forEach(function (el) {
      var ends = titleOf(el).split("->");
      if (ends.length !== 2 || !levelNodes[ends[0]] || !levelNodes[ends[1]]) { return; }
      succ[ends[0]].push(ends[1]); pred[ends[1]].push(ends[0]);
      edgeEls.push({ el: el, source: ends[0], target: ends[1] });
    });
    $("vg-fold").disabled = !levels.slice(0, index).some(function (l) { return l.drawn; });
    $("vg-unfold").disabled = !levels.slice(index + 1).some(function (l) { return l.drawn; });
    drawMinimap();
    if (keep && selected && visibleFor(selected)) { select(selected, true); } else {
      fit();
      highlight(null);
      if (cam.k < 0.45) {                    // too small to read: start at an output, readable
        var end = elements.filter(function (el) { return !succ[el.id].length; })[0];
        if (end) { cam.k = 0.8; centre(end); }
      }
      if (keep && selected) { select(selected, false); }  // its details: "not drawn here"
    }
    status.textContent = levels[index].name + ": " + elements.length + " boxes";
    return true;
  }

  function step(delta) {                     // the next drawn level that way
    for (var i = current + delta; i >= 0 && i < levels.length; i += delta) {
      if (levels[i].drawn) { return useLevel(i, true); }
    }
    return false;
  }

  levels.forEach(function (level, i) {
    var option = document.createElement("option");
    option.value = String(i);
    option.textContent = level.name + " (" + level.count + ({ graphviz: ")", page: ", laid out in the page)" }[level.layout] || ", too big to draw)");
    option.disabled = !level.drawn;
    levelSelect.appendChild(option);
  });
  levelSelect.addEventListener("change", function () { useLevel(+levelSelect.value, true); });
  $("vg-fold").addEventListener("click", function () { step(-1); });
  $("vg-unfold").addEventListener("click", function () { step(1); });

  /* ---- pan and zoom: the SVG's viewBox is the camera ---- */
  var cam = { x: 0, y: 0, k: 1 };            // top-left in graph units, pixels per unit
  function applyCamera() {
    if (!svg) { return; }
    var w = canvas.clientWidth || 1, h = canvas.clientHeight || 1;
    svg.setAttribute("viewBox", [cam.x, cam.y, w / cam.k, h / cam.k].join(" "));
    svg.setAttribute("width", w); svg.setAttribute("height", h);
    moveViewport();
    clearTimeout(labelTimer);
    labelTimer = setTimeout(labelVisible, 60);
  }
  function fit() {
    var w = canvas.clientWidth || 1, h = canvas.clientHeight || 1;
    cam.k = Math.min(w / graphBox.w, h / graphBox.h, 2) * 0.97;
    cam.x = graphBox.x + graphBox.w / 2 - w / cam.k / 2;
    cam.y = graphBox.y + graphBox.h / 2 - h / cam.k / 2;
    applyCamera();
  }
  function zoom(factor, px, py) {            // keep the graph point under (px, py) still
    var w = canvas.clientWidth, h = canvas.clientHeight;
    if (px === undefined) { px = w / 2; py = h / 2; }
    var gx = cam.x + px / cam.k, gy = cam.y + py / cam.k;
    cam.k = Math.max(0.0002, Math.min(40, cam.k * factor));
    cam.x = gx - px / cam.k; cam.y = gy - py / cam.k;
    applyCamera();
  }
  function pan(dx, dy) { cam.x += dx / cam.k; cam.y += dy / cam.k; applyCamera(); }
  function rectOf(el) {                      // an element's box in graph units
    var r = el.getBoundingClientRect(), c = svg.getBoundingClientRect();
    return { x: cam.x + (r.left - c.left) / cam.k, y: cam.y + (r.top - c.top) / cam.k,
             w: r.width / cam.k, h: r.height / cam.k };
  }
  function centre(el) {
    var r = rectOf(el), w = canvas.clientWidth, h = canvas.clientHeight;
    if (cam.k < 0.45) { cam.k = 0.8; }
    cam.x = r.x + r.w / 2 - w / cam.k / 2; cam.y = r.y + r.h / 2 - h / cam.k / 2;
    applyCamera();
  }
  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    var c = canvas.getBoundingClientRect();
    zoom(Math.exp(-event.deltaY * 0.0015), event.clientX - c.left, event.clientY - c.top);
  }, { passive: false });
  var drag = null;
  canvas.addEventListener("pointerdown", function (event) {
    drag = { x: event.clientX, y: event.clientY, moved: false };
  });
  window.addEventListener("pointermove", function (event) {
    if (!drag) { return; }
    var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (drag.moved || Math.abs(dx) + Math.abs(dy) > 4) {
      drag.moved = true; pan(-dx, -dy); drag.x = event.clientX; drag.y = event.clientY;
    }
  });
  window.addEventListener("pointerup", function () { setTimeout(function () { drag = null; }, 0); });
  window.addEventListener("resize", applyCamera);
  $("vg-fit").addEventListener("click", fit);
  $("vg-zoom-in").addEventListener("click", function () { zoom(1.25); });
  $("vg-zoom-out").addEventListener("click", function () { zoom(0.8); });

  /* ---- minimap: the same drawing, small, with the visible rectangle ---- */
  var viewport = null;
  function drawMinimap() {
    minimap.textContent = "";
    var big = elements.length > 40;
    minimap.style.display = big ? "block" : "none";
    if (!big) { viewport = null; return; }
    minimap.setAttribute("viewBox", [graphBox.x, graphBox.y, graphBox.w, graphBox.h].join(" "));
    var map = levels[current].map;
    if (!map) {                              // Graphviz's drawing: show it again, small
      svg.querySelector("g.graph").id = "vg-drawing";
      // innerHTML on an SVG element parses its children as SVG
      minimap.innerHTML = '<use href="#vg-drawing"></use><rect class="vg-viewport"></rect>';
    } else {                                 // a big page layout: its boxes as one path
      var d = [];
      for (var i = 0; i < map.n; i++) {
        d.push("M", map.x[i] - map.w[i] / 2, map.y[i] - map.h[i] / 2, "h", map.w[i], "v", map.h[i],
               "h", -map.w[i], "z");
      }
      minimap.innerHTML = '<path class="vg-boxes"></path><rect class="vg-viewport"></rect>';
      minimap.querySelector("path").setAttribute("d", d.join(" "));
    }
    viewport = minimap.querySelector("rect");
  }
  function moveViewport() {
    if (!viewport) { return; }
    var w = canvas.clientWidth / cam.k, h = canvas.clientHeight / cam.k;
    viewport.setAttribute("x", cam.x); viewport.setAttribute("y", cam.y);
    viewport.setAttribute("width", w); viewport.setAttribute("height", h);
    viewport.setAttribute("stroke-width", Math.max(graphBox.w, graphBox.h) / 150);
  }
  function minimapJump(event) {
    var r = minimap.getBoundingClientRect(), box = minimap.viewBox.baseVal;
    var s = Math.min(r.width / box.width, r.height / box.height);
    var ox = (r.width - box.width * s) / 2, oy = (r.height - box.height * s) / 2;
    var gx = box.x + (event.clientX - r.left - ox) / s, gy = box.y + (event.clientY - r.top - oy) / s;
    cam.x = gx - canvas.clientWidth / cam.k / 2; cam.y = gy - canvas.clientHeight / cam.k / 2;
    applyCamera();
  }
  var mapDrag = false;
  minimap.addEventListener("pointerdown", function (event) { mapDrag = true; minimapJump(event); });
  minimap.addEventListener("pointermove", function (event) { if (mapDrag) { minimapJump(event); } });
  window.addEventListener("pointerup", function () { mapDrag = false; });

  /* ---- selection and paths ---- */
  var selected = null;                       // a full node id, or a box id of this level
  function visibleFor(id) {                  // the element that draws id at this level
    if (levelNodes[id]) { return id; }
    var box = levels[current].owner[id];
    return box && levelNodes[box] ? box : null;
  }
  function reach(start, next) {              // every node reachable from start
    var seen = {}, todo = [start];
    while (todo.length) {
      var id = todo.pop();
      (next[id] || []).forEach(function (other) {
        if (!seen[other]) { seen[other] = true; todo.push(other); }
      });
    }
    return seen;
  }
  function highlight(shown) {
    svg.querySelectorAll(".vg-selected,.vg-up,.vg-down").forEach(function (el) {
      el.classList.remove("vg-selected", "vg-up", "vg-down");
    });
    svg.classList.toggle("vg-dimmed", false);
    if (!shown) { return; }
    levelNodes[shown].classList.add("vg-selected");
    if (!pathsBox.checked) { return; }
    var up = reach(shown, pred), down = reach(shown, succ);
    Object.keys(up).forEach(function (id) { levelNodes[id].classList.add("vg-up"); });
    Object.keys(down).forEach(function (id) { levelNodes[id].classList.add("vg-down"); });
    edgeEls.forEach(function (e) {
      if ((up[e.source] || e.source === shown) && (up[e.target] || e.target === shown)) {
        e.el.classList.add("vg-up");
      } else if ((down[e.source] || e.source === shown) && (down[e.target] || e.target === shown)) {
        e.el.classList.add("vg-down");
      }
    });
    svg.classList.toggle("vg-dimmed", true);
  }
  function select(id, move) {
    selected = id;
    var shown = visibleFor(id);
    highlight(shown);
    showDetails(id, shown);
    if (shown && move) { centre(levelNodes[shown]); }
  }
  pathsBox.addEventListener("change", function () { if (selected) { select(selected, false); } });
  canvas.addEventListener("click", function (event) {
    if (drag && drag.moved) { return; }
    var el = event.target.closest ? event.target.closest("g.node") : null;
    if (el) { select(el.id, false); } else { clearSelection(); }
  });
  canvas.addEventListener("dblclick", function (event) {
    var el = event.target.closest ? event.target.closest("g.node") : null;
    if (el) { select(el.id, false); unfoldSelected(); }
  });
  function clearSelection() {
    selected = null; highlight(null);
    details.textContent = "";
    add(details, "p", "Click a node (or Tab to it and press Enter) to see its details.");
  }
  function unfoldSelected() {                // the next level that draws the box's insides
    var box = selected && levels[current].boxes[selected];
    if (selected && !box && !levelNodes[selected]) {   // a node folded away: show it itself
      var own = nearest(selected, function () { return true; });
      if (own >= 0) { useLevel(own, false); select(selected, true); }
      return own >= 0;
    }
    if (!box) { return step(1); }
    var members = box.details.members || [], member = members[0];
    for (var i = current + 1; i < levels.length; i++) {
      var inner = levels[i].owner[member];   // box ids repeat across levels: compare sizes
      var size = inner ? (levels[i].boxes[inner].details.members || []).length : 0;
      if (levels[i].drawn && member && size < members.length) {
        useLevel(i, false);
        return select(member, true);
      }
    }
    return false;
  }
  function nearest(id, allowed) {           // the nearest level drawing id as its own box
    var order = levels.map(function (l, i) { return i; }).sort(function (a, b) {
      return Math.abs(a - current) - Math.abs(b - current);
    });
    for (var k = 0; k < order.length; k++) {
      var level = levels[order[k]];
      if (level.drawn && !level.hidden[id] && !level.owner[id] && allowed(level)) { return order[k]; }
    }
    return -1;
  }

  /* ---- details panel ---- */
  function add(parent, tag, text, cls) {
    var el = document.createElement(tag);
    if (text !== undefined && text !== null) { el.textContent = text; }
    if (cls) { el.className = cls; }
    parent.appendChild(el);
    return el;
  }
  function labelOf(id) {
    var n = nodes[id] || levels[current].boxes[id];
    if (!n) { return id; }
    return (n.title || n.kind) + (n.lines && n.lines.length ? " " + n.lines.join(" ") : "");
  }
  function shape(s) { return s ? "(" + s.join(", ") + ")" : "?"; }
  function bytes(b) {
    if (b === null || b === undefined) { return "?"; }
    var units = ["B", "KiB", "MiB", "GiB"], i = 0;
    while (b >= 1024 && i < 3) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b) + " " + units[i];
  }
  function table(parent, caption, rows) {
    if (!rows.length) { return; }
    add(parent, "h3", caption);
    var t = add(parent, "table");
    rows.forEach(function (row) {
      var tr = add(t, "tr");
      row.forEach(function (cell) {
        if (cell && cell.nodeType) { add(tr, "td").appendChild(cell); } else { add(tr, "td", cell); }
      });
    });
  }
  function link(id) {                        // a button that selects another node
    var b = document.createElement("button");
    b.type = "button"; b.className = "vg-link"; b.textContent = labelOf(id);
    b.addEventListener("click", function () { select(id, true); });
    return b;
  }
  function showDetails(id, shown) {
    details.textContent = "";
    var n = nodes[id], box = levels[current].boxes[id], extra = data.extra[id] || {};
    if (!n && box) { return showBox(id, box); }
    if (!n) { return; }
    var d = n.details || {};
    add(details, "h2", n.title || d.name || n.kind);
    var facts = [["kind", n.kind], ["id", n.id]];
    if (n.seq !== null && n.seq !== undefined) { facts.push(["seq", String(n.seq)]); }
    if (n.scope) { facts.push(["scope", n.scope]); }
    if (d.name && d.name !== n.title) { facts.push(["name", d.name]); }
    if (d.shape) { facts.push(["tensor", shape(d.shape) + " " + d.dtype]); }
    if (extra.bytes !== undefined) { facts.push(["bytes", bytes(extra.bytes)]); }
    if (d.freed) { facts.push(["saved buffers", "freed by backward()"]); }
    if (n.marks && n.marks.length) { facts.push(["marks", n.marks.join(", ")]); }
    if (shown && shown !== id) { facts.push(["drawn inside", labelOf(shown) + " (u: unfold)"]); }
    if (!shown) { facts.push(["drawn", "not at this level: unfold to see it"]); }
    table(details, "Node", facts);
    table(details, "Forward outputs (gradients in)", (d.outputs || []).map(function (o, i) {
      return ["#" + i, shape(o.shape) + " " + o.dtype];
    }));
    table(details, "Inputs (slot.rank \u2190 producer)", inEdges[id].map(function (e) {
      var x = e.details || {};
      var where = x.slot !== undefined ? x.slot + "." + x.rank : "";
      return [where, link(e.source), x.shape ? shape(x.shape) + " " + (x.dtype || "") : e.label];
    }));
    table(details, "Used by (slot.rank \u2192 consumer)", outEdges[id].map(function (e) {
      var x = e.details || {};
      var where = x.next_slot !== undefined ? x.next_slot + "." + x.next_rank : "";
      return [where, link(e.target), x.shape ? shape(x.shape) + " " + (x.dtype || "") : e.label];
    }));
    table(details, "Saved for backward", (extra.saved || []).map(function (s) {
      if (s.kind === "scalar") { return [s.name, "scalar " + s.value]; }
      return [s.name, s.kind + " " + shape(s.shape) + " " + s.dtype + " \u00b7 " + bytes(s.bytes) +
              " \u00b7 " + (s.freed ? "freed" : "kept")];
    }));
    table(details, "Attributes", extra.attrs || []);
    var grad = extra.grad || d.grad;
    if (grad) {
      table(details, "Gradient", Object.keys(grad).map(function (k) { return [k, String(grad[k])]; }));
    }
    if (extra.stack !== undefined) { showStack(data.stacks[extra.stack]); }
  }
  function showStack(frameIds) {
    add(details, "h3", "Forward stack (most recent call last)");
    var list = add(details, "ol", null, "vg-stack");
    frameIds.forEach(function (f, i) {
      var frame = data.frames[f];
      var item = add(list, "li", null, i === frameIds.length - 1 ? "vg-user" : "");
      add(item, "div", frame[0] + ":" + frame[1] + " in " + frame[2], "vg-where");
      if (frame[3]) { add(item, "code", frame[3]); }
    });
  }
  function showBox(id, box) {
    add(details, "h2", box.title);
    (box.lines || []).forEach(function (line) { add(details, "p", line); });
    var members = box.details.members || [];
    table(details, "Group", [["kind", box.kind], ["id", id], ["members", String(members.length)]]);
    var ops = box.details.ops || {};
    table(details, "Ops inside", Object.keys(ops).sort(function (a, b) { return ops[b] - ops[a]; })
      .map(function (k) { return [k, "x" + ops[k]]; }));
    if (box.details.grad) {
      var g = box.details.grad;
      table(details, "Gradient (all members)", Object.keys(g).map(function (k) { return [k, String(g[k])]; }));
    }
    var b = add(details, "button", "Unfold (u)", "vg-action");
    b.type = "button"; b.addEventListener("click", unfoldSelected);
    table(details, "Members" + (members.length > 200 ? " (first 200)" : ""),
      members.slice(0, 200).map(function (m) { return [link(m)]; }));
  }

  /* ---- search: op, tensor name, scope, or file.py:42 ---- */
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
  // A search hit is shown as its own box: at the nearest level Graphviz drew that
  // draws it (instant), else inside its group here (u / Unfold opens a level laid
  // out in the page, which takes seconds for 20,000 boxes), else at any level.
  function jump(id) {
    if (!levelNodes[id]) {
      var own = nearest(id, function (level) { return level.layout === "graphviz"; });
      if (own < 0 && !visibleFor(id)) { own = nearest(id, function () { return true; }); }
      if (own >= 0) { useLevel(own, false); }
    }
    select(id, true);
    var shown = visibleFor(id);
    if (shown) { levelNodes[shown].focus({ preventScroll: true }); }
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

  /* ---- keyboard ---- */
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    var typing = tag === "input" || tag === "select" || tag === "textarea";
    if (event.key === "Escape") {
      if (typing) { event.target.blur(); }
      search.value = ""; results.textContent = ""; clearSelection();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var node = event.target.closest ? event.target.closest("g.node") : null;
    var moves = { ArrowLeft: [-60, 0], ArrowRight: [60, 0], ArrowUp: [0, -60], ArrowDown: [0, 60] };
    if (event.key === "/") { event.preventDefault(); search.focus(); search.select(); }
    else if (event.key === "Enter" && node) { select(node.id, false); }
    else if (event.key === "+" || event.key === "=") { zoom(1.25); }
    else if (event.key === "-") { zoom(0.8); }
    else if (event.key === "0") { fit(); }
    else if (event.key === "[") { step(-1); }
    else if (event.key === "]") { step(1); }
    else if (event.key === "u") { unfoldSelected(); }
    else if (moves[event.key] && tag !== "button") {
      event.preventDefault(); pan(moves[event.key][0], moves[event.key][1]);
    } else { return; }
  });
  // Focusing a node scrolls its (overflow: hidden) container natively; the camera
  // does the moving here, so the container stays at 0, 0.
  function unscroll() { canvas.scrollTop = 0; canvas.scrollLeft = 0; }
  canvas.addEventListener("scroll", unscroll);
  canvas.addEventListener("focusin", function (event) {     // Tab to a node off screen
    var el = event.target.closest ? event.target.closest("g.node") : null;
    unscroll();
    if (!el) { return; }
    var r = el.getBoundingClientRect(), c = canvas.getBoundingClientRect();
    if (r.right < c.left || r.left > c.right || r.bottom < c.top || r.top > c.bottom) { centre(el); }
  });

  useLevel(data.start, false);
  window.vizgradViewer = {                   // for tests and the console
    level: function () { return current; }, levels: levels, select: select, jump: jump,
    useLevel: useLevel, find: find, visibleFor: visibleFor, camera: cam
  };
})();
