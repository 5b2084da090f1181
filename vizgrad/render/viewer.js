/* vizgrad's graph viewer: pan/zoom, minimap, search, details, paths, folding.
 * Written for vizgrad (no library, no network). Data: the JSON block #vizgrad-data
 * (docs/json_schema.md plus "extra" facts per node, one entry per fold level and the
 * scope tree).  viewer_layout.js lays out what Graphviz did not; viewer_fold.js says
 * what a fold state of the scope tree draws; viewer_details.js fills the details
 * panel.  User text is only ever shown with
 * textContent (or escaped, in the drawings this page makes). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("vizgrad-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var canvas = $("vg-canvas"), minimap = $("vg-minimap"), details = $("vg-details");
  var results = $("vg-results"), search = $("vg-search"), status = $("vg-status");
  var levelSelect = $("vg-level"), pathsBox = $("vg-paths"), layout = window.vizgradLayout;

  /* ---- the full graph: nodes by id, edges in and out ---- */
  var nodes = {}, inEdges = {}, outEdges = {};
  data.graph.nodes.forEach(function (n) { nodes[n.id] = n; inEdges[n.id] = []; outEdges[n.id] = []; });
  data.graph.edges.forEach(function (e) {
    if (inEdges[e.target]) { inEdges[e.target].push(e); }
    if (outEdges[e.source]) { outEdges[e.source].push(e); }
  });
  var levels = data.levels, fold = window.vizgradFold(data, nodes);
  levels.forEach(function (level) {        // full node id -> the box that draws it
    level.drawn = !!level.layout;
    level.owner = {};
    var hidden = level.hidden; level.hidden = {};
    hidden.forEach(function (id) { level.hidden[id] = true; });
    Object.keys(level.tree || {}).forEach(function (box) {   // a scope's box: members from the tree
      if (level.boxes[box] && !level.boxes[box].details.members) {
        level.boxes[box].details.members = fold.members(level.tree[box]);
      }
    });
    Object.keys(level.boxes).forEach(function (box) {
      (level.boxes[box].details.members || []).forEach(function (m) { level.owner[m] = box; });
    });
    level.key = level.folded ? level.folded.join(",") : null;
  });

  /* ---- theme: follow the system unless the page was saved dark ---- */
  var root = document.documentElement;
  if (!root.classList.contains("vg-forced") && window.matchMedia) {
    var scheme = window.matchMedia("(prefers-color-scheme: dark)");
    var applyScheme = function () { root.classList.toggle("vg-dark", scheme.matches); };
    applyScheme();
    if (scheme.addEventListener) { scheme.addEventListener("change", applyScheme); }
  }

  /* ---- drawings: a level's Graphviz SVG, or one this page laid out (a fold state of
   * the scope tree, or a level too big for Graphviz).  The DOM keeps only the shown
   * one; each is made once and kept (a fold state by its key), so folding back is a swap. ---- */
  var cur = null, svg = null, graphBox = null, levelNodes = {}, succ = {}, pred = {};
  var edgeEls = [], trunkEls = [], elements = [], open = fold ? fold.fromLevel(levels[data.start]) : null;
  var svgCache = {}, drawings = {}, stateDrawings = {};
  svgCache[data.start] = canvas.querySelector("svg.vg-graph");
  var FILL = data.palette;                   // a fill per kind: the page's theme (vocabulary.py)

  function parse(text) {
    var holder = document.createElement("div");
    holder.innerHTML = text;
    return holder.querySelector("svg");
  }
  function graphviz(index) {                 // a level Graphviz laid out
    var level = levels[index];
    if (!svgCache[index] && level.svg) { svgCache[index] = parse(level.svg); level.svg = null; }
    if (!svgCache[index]) { return null; }
    drawings[index] = drawings[index] || { name: level.name, svg: svgCache[index], boxes: level.boxes,
                                           owner: level.owner, hidden: level.hidden, map: null, level: index };
    return drawings[index];
  }
  function lines(id, boxes) {                // a box's label, as the page draws it
    var n = nodes[id] || boxes[id] || {};
    return [n.title || ""].concat(n.lines || [], (n.rows || []).map(function (r) { return r.join(" "); }))
      .filter(function (t) { return t; });
  }
  function drawing(name, shown, level) {     // lay out and parse one drawing
    var boxes = shown.boxes;
    var made = layout.compound({
      ids: shown.ids, cont: shown.cont, edges: shown.edges,
      lines: function (id) { return lines(id, boxes); },
      fill: function (id) { var n = nodes[id] || boxes[id] || {}; return n.fill || FILL[n.kind] || FILL.op; },
      parentOf: function (s) { return s >= 0 ? fold.parents[s] : -1; },
      title: function (s) { return fold.title(s); }
    });
    return { name: name, svg: parse(made.svg), boxes: boxes, owner: shown.owner,
             hidden: shown.hidden || {}, map: made.map, level: level };
  }
  function pageLevel(index) {                // a level too big for Graphviz, without a tree
    var level = levels[index];
    if (!drawings[index]) {
      var all = !level.ids, edges = all ? data.graph.edges.map(function (e) {
        return [e.source, e.target, e.label, e.tail_label, e.head_label,
                e.style === "dashed" || e.style === "dotted", e.undirected];
      }) : level.edges;
      var ids = level.ids || data.graph.nodes.map(function (n) { return n.id; });
      drawings[index] = drawing(level.name, { ids: ids, cont: ids.map(function () { return -1; }),
        edges: edges, boxes: level.boxes, owner: level.owner, hidden: level.hidden }, index);
    }
    return drawings[index];
  }
  var recent = [];                           // the fold states drawn, oldest first
  function stateDrawing(name, level) {       // what the open flags draw
    var key = fold.key(open);
    if (!stateDrawings[key]) {
      var t0 = performance.now();
      stateDrawings[key] = drawing(name, fold.visible(open), level);
      stateDrawings[key].ms = performance.now() - t0;
    }
    recent = recent.filter(function (k) { return k !== key; }).concat([key]);
    while (recent.length > 8) { delete stateDrawings[recent.shift()]; }  // bounded memory
    stateDrawings[key].name = name; stateDrawings[key].level = level;   // reached as a level or not
    return stateDrawings[key];
  }

  /* Text is what makes a big drawing slow (shaping 20,000 labels takes seconds), so a
   * drawing made here gets its labels only where the reader looks, once zoomed in enough. */
  var labelTimer = null;
  function labelVisible() {
    if (!cur || !cur.map || cam.k < 0.3) { return; }
    layout.labelIn(cur.map, svg, function (id) { return levelNodes[id]; }, cam.x, cam.y,
                   cam.x + canvas.clientWidth / cam.k, cam.y + canvas.clientHeight / cam.k);
  }

  function titleOf(el) {                     // an edge's "source->target"
    var ends = el.getAttribute("data-ends");   // our layout; Graphviz writes a <title>
    if (ends !== null) { return ends; }
    var title = el.querySelector("title");
    if (title && el.classList.contains("vg-back")) {  // written head first (dot.py): turn it
      return title.textContent.split("->").reverse().join("->");
    }
    return title ? title.textContent : "";
  }

  function show(next, keep) {
    if (selected && !nodes[selected]) {      // a box of the old drawing: keep its first member
      var old = cur.boxes[selected];
      selected = old && old.details.members ? old.details.members[0] : null;
    }
    if (svg) { svg.remove(); }
    var waiting = $("vg-waiting");           // the text shown before the page laid a level out
    if (waiting) { waiting.remove(); }
    canvas.appendChild(next.svg);
    cur = next; svg = next.svg; levelSelect.value = String(next.level);
    if (!svg.vgBox) {                        // the drawing's box; the camera rewrites viewBox
      var box = svg.viewBox.baseVal;
      svg.vgBox = { x: box.x, y: box.y, w: box.width || 1, h: box.height || 1 };
    }
    graphBox = svg.vgBox;
    levelNodes = {}; succ = {}; pred = {}; edgeEls = [];
    trunkEls = Array.prototype.slice.call(svg.querySelectorAll(".vg-trunk"));
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
      // its text, drawn above every arrow (svg_labels.py), lit and dimmed with it
      var text = el.id && svg.querySelector('.vg-edge-label[data-edge="' + el.id + '"]');
      edgeEls.push({ el: el, text: text, source: ends[0], target: ends[1] });
    });
    $("vg-fold").disabled = !neighbour(-1);
    $("vg-unfold").disabled = !neighbour(1);
    drawMinimap();
    if (keep && selected && visibleFor(selected)) { select(selected, true); } else {
      fit();
      highlight(null);
      if (cam.k < 0.45) {                    // too small to read: start at an output, readable
        var end = elements.filter(function (el) { return !succ[el.id].length; })[0];
        if (end) { centre(end); }            // zooms in, measuring end at the fitted zoom
      }
      if (keep && selected) { select(selected, false); }  // its details: "not drawn here"
    }
    status.textContent = cur.name + ": " + elements.length + " boxes";
    showKey(keyOf(cur));
    return true;
  }

  /* ---- the key: what the marks of this level mean (a panel, not a graph node) ---- */
  // a drawing the page made for a fold state mixes levels: it gets every mark they use
  function keyOf(drawn) {
    if (drawn.level >= 0) { return levels[drawn.level].legend; }
    var rows = [], seen = {}, scale = [], title = "";
    levels.forEach(function (level) {
      if (!level.legend) { return; }
      level.legend.rows.forEach(function (row) { if (!seen[row[1]]) { seen[row[1]] = true; rows.push(row); } });
      if (level.legend.scale.length) { scale = level.legend.scale; title = level.legend.title; }
    });
    return levels.some(function (level) { return level.legend; }) ? { rows: rows, scale: scale, title: title } : null;
  }
  function showKey(key) {
    var panel = $("vg-key");
    if (!panel) { return; }                  // legend=False: no key on this page
    var table = $("vg-key-rows"), scale = $("vg-key-scale");
    var put = function (parent, tag, text, cls) {   // text only: user text stays text
      var made = document.createElement(tag);
      if (text) { made.textContent = text; }
      if (cls) { made.className = cls; }
      return parent.appendChild(made);
    };
    table.textContent = ""; scale.textContent = "";
    (key ? key.rows : []).forEach(function (row) {
      var tr = put(table, "tr"), sample = put(put(tr, "td"), "span", row[0],
                                              "vg-key-sample vg-key-" + (row[3] || "box"));
      if (row[2]) { sample.style.background = row[2]; }
      put(tr, "td", row[1]);
    });
    if (key && key.scale.length) {
      put(scale, "span", (key.title || "gradient norm") + " ");
      key.scale.forEach(function (entry) {
        var cell = put(scale, "span", entry[0], "vg-key-sample");
        cell.style.background = entry[1]; cell.style.color = entry[2] || "black";
      });
    }
    panel.hidden = !(key && (key.rows.length || key.scale.length));
  }


  function useLevel(index, keep) {
    var level = levels[index];
    if (fold) { open = fold.fromLevel(level); }
    var next = graphviz(index);
    if (!next && level.layout === "page") {
      next = fold && level.exact ? stateDrawing(level.name, index) : pageLevel(index);
    }
    return next ? show(next, keep) : false;
  }
  function useState(keep) {                  // the open flags: a level's drawing if it is one
    var key = fold.key(open);
    for (var i = 0; i < levels.length; i++) {
      if (levels[i].exact && levels[i].key === key && (levels[i].svg || svgCache[i])) {
        var flags = open, done = useLevel(i, keep);
        open = flags;                        // the same partition; keep the flags under boxes
        return done;
      }
    }
    return show(stateDrawing("scopes folded one by one", -1), keep);
  }

  function neighbour(delta) {                // the next drawn level that way (by boxes drawn)
    var count = cur ? elements.length : 0;
    for (var i = delta > 0 ? 0 : levels.length - 1; i >= 0 && i < levels.length; i += delta) {
      if (!levels[i].drawn || i === cur.level) { continue; }
      if (cur.level >= 0 ? (i - cur.level) * delta > 0 : (levels[i].count - count) * delta > 0) { return i + 1; }
    }
    return 0;
  }
  function step(delta) { var next = neighbour(delta); return next ? useLevel(next - 1, true) : false; }

  levels.forEach(function (level, i) {
    var option = document.createElement("option");
    option.value = String(i);
    option.textContent = level.name + " (" + level.count + ({ graphviz: ")", page: ", laid out in the page)" }[level.layout] || ", too big to draw)");
    option.disabled = !level.drawn;
    levelSelect.appendChild(option);
  });
  if (fold) {
    var custom = document.createElement("option");
    custom.value = "-1"; custom.disabled = true; custom.textContent = "scopes folded one by one";
    levelSelect.appendChild(custom);
  }
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
    var map = cur.map;
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
    var box = cur.owner[id];
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
      var mark = null;
      if ((up[e.source] || e.source === shown) && (up[e.target] || e.target === shown)) {
        mark = "vg-up";
      } else if ((down[e.source] || e.source === shown) && (down[e.target] || e.target === shown)) {
        mark = "vg-down";
      }
      if (mark) { e.el.classList.add(mark); if (e.text) { e.text.classList.add(mark); } }
    });
    trunkEls.forEach(function (el) {         // a hub's trunk: lit when its hub is (its branches say where)
      var hub = el.getAttribute("data-from") || el.getAttribute("data-to");
      if (up[hub] || (hub === shown && el.hasAttribute("data-to"))) { el.classList.add("vg-up"); }
      if (down[hub] || (hub === shown && el.hasAttribute("data-from"))) { el.classList.add("vg-down"); }
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
    var frame = el ? null : scopeAt(event.target);
    if (el) { select(el.id, false); } else if (frame !== null) { foldScope(frame); } else { clearSelection(); }
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

  /* ---- folding one scope at a time: the open flags change, the drawing follows ---- */
  function scopeAt(target) {                 // an open scope's title (ours or Graphviz's) -> scope
    if (!fold || !target.closest) { return null; }
    var ours = target.closest("[data-scope]");
    if (ours) { return +ours.getAttribute("data-scope"); }
    var cluster = target.tagName === "text" ? target.closest("g.cluster") : null;
    var title = cluster && cluster.querySelector("title");
    var known = cur.level >= 0 && levels[cur.level].clusters;
    return title && known && known[title.textContent] !== undefined ? known[title.textContent] : null;
  }
  function scopeOfBox(id) {                  // the folded scope box id draws, if any
    if (!fold || !cur.boxes[id]) { return undefined; }
    if (cur.boxes[id].scope !== undefined) { return cur.boxes[id].scope; }
    return cur.level >= 0 && levels[cur.level].tree ? levels[cur.level].tree[id] : undefined;
  }
  function focusOn(id) {                     // select the box drawing id and bring it into view
    var shown = visibleFor(id);
    if (shown) { select(shown, true); levelNodes[shown].focus({ preventScroll: true }); }
  }
  function unfoldScope(scope) {              // just that scope: its boxes appear, the rest stays
    fold.unfold(open, scope);
    selected = null;
    useState(false);
    focusOn(fold.members(scope)[0]);         // its first box inside, selected (as a level change does)
    return true;
  }
  function foldScope(scope) {                // back to one box, selected
    open[scope] = 0;
    useState(false);
    focusOn(fold.members(scope)[0]);
    return true;
  }
  function foldTarget() {                    // the open scope holding the selection
    if (!fold || !selected) { return undefined; }
    var scope = scopeOfBox(selected);
    scope = scope !== undefined ? fold.parents[scope] : fold.homeOf[selected];
    while (scope !== undefined && scope >= 0 && !open[scope]) { scope = fold.parents[scope]; }
    return scope !== undefined && scope >= 0 ? scope : undefined;
  }
  function foldSelected() {
    var scope = foldTarget();
    return scope !== undefined ? foldScope(scope) : false;
  }
  function reveal(id) {                      // unfold the scopes holding node id, select it
    fold.reveal(open, id);
    useState(false);
    select(id, true);
    return true;
  }
  function unfoldSelected() {                // a scope box: that scope; else the next level
    var box = selected && cur.boxes[selected];
    if (selected && !box && !levelNodes[selected]) {   // a node folded away: show it itself
      if (fold && fold.homeOf[selected] !== undefined) { return reveal(selected); }
      var own = nearest(selected, function () { return true; });
      if (own >= 0) { useLevel(own, false); select(selected, true); }
      return own >= 0;
    }
    if (!box) { return step(1); }
    var scope = scopeOfBox(selected);
    if (scope !== undefined) { return unfoldScope(scope); }
    var members = box.details.members || [], member = members[0];
    for (var i = Math.max(cur.level, 0) + 1; i < levels.length; i++) {
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
    var here = Math.max(cur.level, 0);
    var order = levels.map(function (l, i) { return i; }).sort(function (a, b) {
      return Math.abs(a - here) - Math.abs(b - here);
    });
    for (var k = 0; k < order.length; k++) {
      var level = levels[order[k]];
      if (level.drawn && !level.hidden[id] && !level.owner[id] && allowed(level)) { return order[k]; }
    }
    return -1;
  }

  /* ---- details panel (viewer_details.js) ---- */
  var panel = window.vizgradDetails({
    data: data, nodes: nodes, inEdges: inEdges, outEdges: outEdges, panel: details,
    drawing: function () { return cur; }, select: select, unfold: unfoldSelected,
    fold: foldSelected, foldTarget: foldTarget,
    scopeTitle: function (scope) { return fold.title(scope); }
  });
  var add = panel.add, labelOf = panel.labelOf, showDetails = panel.show;

  /* ---- search (viewer_search.js) ---- */
  var find = window.vizgradSearch({ data: data, nodes: nodes, results: results, search: search,
                                    add: add, jump: jump }).find;

  // A search hit is shown as its own box: at the nearest level Graphviz drew that
  // draws it (instant), else inside its group here (u / Unfold opens a level laid
  // out in the page, which takes seconds for 20,000 boxes), else at any level.
  function jump(id) {
    if (!levelNodes[id] && fold && fold.homeOf[id] !== undefined) {
      reveal(id);                            // unfold just the scopes holding it
    } else if (!levelNodes[id]) {
      var own = nearest(id, function (level) { return level.layout === "graphviz"; });
      if (own < 0 && !visibleFor(id)) { own = nearest(id, function () { return true; }); }
      if (own >= 0) { useLevel(own, false); }
    }
    select(id, true);
    var shown = visibleFor(id);
    if (shown) { levelNodes[shown].focus({ preventScroll: true }); }
  }
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
    else if (event.key === "f") { foldSelected(); }
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

  useLevel(window.vizgradFirstLevel(data, canvas), false);   // for this window (viewer_start.js)
  window.vizgradViewer = {                   // for tests and the console
    level: function () { return cur.level; }, open: function () { return open; }, fold: fold,
    drawing: function () { return cur; }, unfoldScope: unfoldScope, foldScope: foldScope, levels: levels, select: select, jump: jump,
    useLevel: useLevel, find: find, visibleFor: visibleFor, camera: cam
  };
})();
