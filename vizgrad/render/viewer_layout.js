/* vizgrad's own layout, for drawings the page makes (a scope unfolded on its own, or
 * a level too big for Graphviz): nested layered layout, written for vizgrad.
 *
 * Each open module scope is a box laid out on its own, innermost first: its boxes
 * and its inner scopes (already laid out, so of known size) are ranked as late as
 * possible (the longest path down to an output decides, so a node sits one row
 * above its highest consumer and a leaf by the op using it), then ordered and
 * placed by three barycentre passes (down by producers, up by consumers, down
 * again), each row packed left to right at its wanted x and shifted back to centre
 * on it.  An edge between two scopes counts in their nearest common scope, between
 * the two inner scopes holding its ends.  Linear time but for the sorts in a row;
 * cycles (two scopes feeding each other) are broken by ignoring the edge that
 * closes one.  An edge that skips rows passes through a narrow stand-in box in each
 * row between (ordered with the real boxes, so it goes round them); a hub's long edges
 * share one column of them (a trunk), and past a budget of stand-ins an edge is drawn
 * straight, so the stand-ins stay linear in the boxes.  Labels (boxes, scope titles and
 * edge labels) are not in the SVG text: the page adds them where the reader looks. */
window.vizgradLayout = (function () {
  "use strict";
  var GAP = 12, ROW = 36, PAD = 10, TITLE = 20, STANDIN = 8;

  function esc(text) {
    return String(text).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
  }

  /* A box with more long edges (edges that skip rows) than this, out or in, is a hub: a
   * weight every step of an unrolled RNN uses, a sum over every step.  Its long edges
   * share one column of stand-ins, a trunk, each leaving (or joining) it in the row next
   * to its other end; a column each would be edges x rows stand-ins, quadratic (a
   * 10,000-box RNN crashed Chromium). */
  var HUB = 8;
  /* Stand-ins one layout of n boxes may add: past it an edge is drawn straight (through
   * what is in between), so no graph makes the layout super-linear. */
  function standInBudget(n) { return 8 * n + 2000; }

  /* Lay out n boxes (sizes w, h) with edges outs/ins (index lists); solid[k]: box k may
   * be a hub (an inner scope may not: its edges start at boxes inside it).  Returns
   * centre x, y; route["a>b"]: the points [x, top, bottom] an edge a -> b passes
   * through in each row it skips (a narrow stand-in box per row, ordered with the real
   * ones); trunks: {end, out, points} a hub's shared column; bundled["a>b"]: [trunk,
   * point] where a -> b leaves (out) or joins (in) a trunk. */
  function layered(n, w, h, outs, ins, solid) {
    var i, j, r, left = new Int32Array(n), order = [], placed = new Uint8Array(n);
    for (i = 0; i < n; i++) { left[i] = outs[i].length; if (!left[i]) { order.push(i); placed[i] = 1; } }
    var next = 0;
    for (j = 0; j < n; j++) {                // reverse topological order, from the sinks
      if (j === order.length) {              // a cycle: take the first box not yet placed
        while (placed[next]) { next++; }
        order.push(next); placed[next] = 1;
      }
      ins[order[j]].forEach(function (u) {
        if (!placed[u] && --left[u] === 0) { order.push(u); placed[u] = 1; }
      });
    }
    var at = new Int32Array(n), depth = new Int32Array(n), deepest = 0;
    order.forEach(function (v, k) { at[v] = k; });
    order.forEach(function (v) {             // longest path down, edges closing a cycle ignored
      outs[v].forEach(function (u) { if (at[u] < at[v]) { depth[v] = Math.max(depth[v], depth[u] + 1); } });
      deepest = Math.max(deepest, depth[v]);
    });
    var rows = [], rowOf = new Int32Array(n);
    for (r = 0; r <= deepest; r++) { rows.push([]); }
    for (i = 0; i < n; i++) { rowOf[i] = deepest - depth[i]; }
    for (j = order.length - 1; j >= 0; j--) { rows[rowOf[order[j]]].push(order[j]); }
    /* which long edges share a hub's trunk, get stand-ins of their own, or (past the
     * budget) none: trunks first, the biggest hubs first, then single edges shortest
     * first, so the budget makes room for as many edges as it can */
    var far = [], longOut = new Int32Array(n), outLast = new Int32Array(n);
    var longIn = new Int32Array(n), inFirst = new Int32Array(n);
    var hubOut = new Uint8Array(n), hubIn = new Uint8Array(n), budget = standInBudget(n);
    for (i = 0; i < n; i++) {
      outs[i].forEach(function (u) {
        if (rowOf[u] - rowOf[i] < 2) { return; }
        far.push([i, u]); longOut[i]++; outLast[i] = Math.max(outLast[i], rowOf[u]);
      });
    }
    function hubs(count, cost, chosen) {
      var list = [];
      for (var k = 0; k < n; k++) { if (count[k] > HUB && solid[k]) { list.push(k); } }
      list.sort(function (p, q) { return count[q] - count[p] || p - q; });
      list.forEach(function (k) { if (cost(k) <= budget) { budget -= cost(k); chosen[k] = 1; } });
    }
    hubs(longOut, function (k) { return outLast[k] - rowOf[k] - 1; }, hubOut);
    inFirst.fill(deepest);
    far.forEach(function (e) {
      if (!hubOut[e[0]]) { longIn[e[1]]++; inFirst[e[1]] = Math.min(inFirst[e[1]], rowOf[e[0]]); }
    });
    hubs(longIn, function (k) { return rowOf[k] - inFirst[k] - 1; }, hubIn);
    var own = {}, single = far.filter(function (e) { return !hubOut[e[0]] && !hubIn[e[1]]; });
    function skip(e) { return rowOf[e[1]] - rowOf[e[0]]; }
    single.sort(function (p, q) { return skip(p) - skip(q) || p[0] - q[0] || p[1] - q[1]; });
    single.forEach(function (e) {
      if (skip(e) - 1 <= budget) { budget -= skip(e) - 1; own[e[0] + ">" + e[1]] = 1; }
    });
    /* the graph the ordering passes see: stand-ins in the rows an edge skips */
    w = Array.prototype.slice.call(w); h = Array.prototype.slice.call(h);
    var O = [], I = [], total = n, chains = {}, trunks = [], trunkOf = {}, bundled = {};
    for (i = 0; i < n; i++) { O.push([]); I.push([]); }
    function link(a, b) { O[a].push(b); I[b].push(a); }
    function column(first, last) {           // stand-ins in rows first..last, linked down
      var list = [];
      for (var row = first; row <= last; row++) {
        var d = total++;
        w.push(STANDIN); h.push(0); O.push([]); I.push([]); rows[row].push(d);
        if (list.length) { link(list[list.length - 1], d); }
        list.push(d);
      }
      return list;
    }
    function trunk(name, end, out, first, last) {
      if (trunkOf[name] === undefined) {
        var list = column(first, last);
        if (out) { link(end, list[0]); } else { link(list[list.length - 1], end); }
        trunkOf[name] = trunks.length;
        trunks.push({ end: end, out: out, first: first, list: list });
      }
      return trunkOf[name];
    }
    for (i = 0; i < n; i++) {
      outs[i].forEach(function (u) {
        var from = rowOf[i], to = rowOf[u], key = i + ">" + u, t, k;
        if (to - from < 2) { link(i, u); } else if (hubOut[i]) {
          t = trunk("o" + i, i, true, from + 1, outLast[i] - 1);
          k = to - 1 - trunks[t].first;
          link(trunks[t].list[k], u); bundled[key] = [t, k];
        } else if (hubIn[u]) {
          t = trunk("i" + u, u, false, inFirst[u] + 1, to - 1);
          k = from + 1 - trunks[t].first;
          link(i, trunks[t].list[k]); bundled[key] = [t, k];
        } else if (own[key]) {
          var chain = column(from + 1, to - 1);
          link(i, chain[0]); link(chain[chain.length - 1], u);
          chains[key] = chain;
        } else { link(i, u); }               // past the budget: drawn straight
      });
    }
    outs = O; ins = I; n = total;
    var x = new Float64Array(n);
    rows.forEach(function (row) {
      var cursor = 0;
      row.forEach(function (v) { x[v] = cursor + w[v] / 2; cursor += w[v] + GAP; });
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
      byWant.sort(function (a, b) { return want[a] - want[b] || a - b; });
      var out = [], shift = 0, edge = -Infinity;
      byWant.forEach(function (k) {
        var v = row[k];
        x[v] = Math.max(want[k], edge + w[v] / 2 + GAP);
        edge = x[v] + w[v] / 2;
        shift += want[k] - x[v];
        out.push(v);
      });
      shift /= Math.max(row.length, 1);
      out.forEach(function (v) { x[v] += shift; });
      return out;
    }
    for (r = 1; r < rows.length; r++) { rows[r] = pass(rows[r], ins); }
    for (r = rows.length - 2; r >= 0; r--) { rows[r] = pass(rows[r], outs); }
    for (r = 1; r < rows.length; r++) { rows[r] = pass(rows[r], ins); }
    var y = new Float64Array(n), span = new Float64Array(n), top = 0;
    var minX = n ? Infinity : 0, maxX = n ? -Infinity : 0;
    rows.forEach(function (row) {
      var tallest = 0;
      row.forEach(function (v) {
        tallest = Math.max(tallest, h[v]);
        minX = Math.min(minX, x[v] - w[v] / 2); maxX = Math.max(maxX, x[v] + w[v] / 2);
      });
      row.forEach(function (v) { y[v] = top + tallest / 2; span[v] = tallest / 2; });
      top += tallest + ROW;
    });
    var route = {};
    function points(list) { return list.map(function (d) { return [x[d], y[d] - span[d], y[d] + span[d]]; }); }
    Object.keys(chains).forEach(function (key) { route[key] = points(chains[key]); });
    return { x: x, y: y, minX: minX, maxX: maxX, height: Math.max(top - ROW, 0), route: route,
             trunks: trunks.map(function (t) { return { end: t.end, out: t.out, points: points(t.list) }; }),
             bundled: bundled };
  }

  function sizeOf(lines) {
    var longest = 2;
    lines.forEach(function (t) { longest = Math.max(longest, t.length); });
    return [16 + 6.1 * longest, 8 + 12 * Math.max(lines.length, 1)];
  }

  /* input: ids (boxes drawn), lines(id) -> label lines, fill(id), cont (the open scope
   * holding each box, -1: none), parentOf(scope), title(scope), edges: [a, b, label,
   * tail, head, style, undirected].  Returns the SVG text and the map the page keeps. */
  function compound(input) {
    var n = input.ids.length, i, at = {}, w = new Float64Array(n), h = new Float64Array(n);
    var label = [];
    for (i = 0; i < n; i++) {
      at[input.ids[i]] = i;
      label.push(input.lines(input.ids[i]));
      var size = sizeOf(label[i]);
      w[i] = Math.round(size[0]); h[i] = size[1];
    }
    /* the scopes drawn and what each holds: "b<i>" a box, "s<scope>" an inner scope */
    var held = { "-1": [] }, scopes = [], depthOf = { "-1": 0 };
    function scopeDepth(s) {
      if (depthOf[s] === undefined) {
        var chain = [], d;
        for (d = s; depthOf[d] === undefined; d = input.parentOf(d)) { chain.push(d); }
        for (var k = chain.length - 1; k >= 0; k--) { depthOf[chain[k]] = depthOf[input.parentOf(chain[k])] + 1; }
      }
      return depthOf[s];
    }
    function use(s) {                        // s and its parents drawn (a loop: no recursion)
      var chain = [];
      for (; s >= 0 && !held[s]; s = input.parentOf(s)) { chain.push(s); }
      for (var k = chain.length - 1; k >= 0; k--) {
        held[chain[k]] = []; scopes.push(chain[k]); scopeDepth(chain[k]);
        held[input.parentOf(chain[k])].push("s" + chain[k]);
      }
    }
    for (i = 0; i < n; i++) { use(input.cont[i]); held[input.cont[i]].push("b" + i); }
    /* each edge counts in the nearest scope holding both ends */
    var local = { "-1": [] };
    scopes.forEach(function (s) { local[s] = []; });
    function lift(a, b) {                    // [scope, key of a's side, key of b's side]
      var ra = "b" + a, rb = "b" + b, ca = input.cont[a], cb = input.cont[b];
      while (ca !== cb) {
        if (depthOf[ca] >= depthOf[cb]) { ra = "s" + ca; ca = input.parentOf(ca); } else { rb = "s" + cb; cb = input.parentOf(cb); }
      }
      return [ca, ra, rb];
    }
    input.edges.forEach(function (e) {
      var a = at[e[0]], b = at[e[1]];
      if (a === undefined || b === undefined || a === b) { return; }
      var lifted = lift(a, b);
      if (lifted[1] !== lifted[2]) { local[lifted[0]].push([lifted[1], lifted[2]]); }
    });
    /* innermost scopes first: each laid out inside its box, of known size then */
    var size = {}, inner = {};               // "s<scope>" -> [w, h]; scope -> its layout
    scopes.sort(function (p, q) { return depthOf[q] - depthOf[p]; });
    scopes.concat([-1]).forEach(function (s) {
      var keys = held[s], m = keys.length, index = {}, kw = new Float64Array(m), kh = new Float64Array(m);
      var outs = [], ins = [], solid = new Uint8Array(m), seen = {};
      keys.forEach(function (key, k) {
        index[key] = k; outs.push([]); ins.push([]); solid[k] = key[0] === "b";
        if (key[0] === "b") { kw[k] = w[+key.slice(1)]; kh[k] = h[+key.slice(1)]; } else { kw[k] = size[key][0]; kh[k] = size[key][1]; }
      });
      local[s].forEach(function (pair) {
        var a = index[pair[0]], b = index[pair[1]];   // once (a hub's list is long: no indexOf)
        if (!seen[a + ">" + b]) { seen[a + ">" + b] = 1; outs[a].push(b); ins[b].push(a); }
      });
      var placed = layered(m, kw, kh, outs, ins, solid);
      placed.keys = keys; placed.w = kw; placed.h = kh; placed.index = index;
      inner[s] = placed;
      var titleWidth = s >= 0 ? 14 + 6.1 * input.title(s).length : 0;
      size["s" + s] = [Math.max(placed.maxX - placed.minX, titleWidth) + 2 * PAD, placed.height + TITLE + PAD];
    });
    /* absolute places, outermost first */
    var x = new Float64Array(n), y = new Float64Array(n), frames = [], origin = {};
    var todo = [[-1, 0, 0]];
    while (todo.length) {
      var job = todo.pop(), s = job[0], placed = inner[s];
      var ox = job[1] - placed.minX + (s >= 0 ? PAD : 0), oy = job[2] + (s >= 0 ? TITLE : 0);
      origin[s] = [ox, oy];
      placed.keys.forEach(function (key, k) {
        var cx = ox + placed.x[k], cy = oy + placed.y[k];
        if (key[0] === "b") { x[+key.slice(1)] = cx; y[+key.slice(1)] = cy; } else {
          var sw = placed.w[k], sh = placed.h[k], left = cx - sw / 2, top = cy - sh / 2;
          frames.push({ scope: +key.slice(1), x: left, y: top, w: sw, h: sh });
          todo.push([+key.slice(1), left, top]);
        }
      });
    }
    for (i = 0; i < n; i++) { x[i] = Math.round(x[i] * 10) / 10; y[i] = Math.round(y[i] * 10) / 10; }
    frames.forEach(function (f) {            // short numbers: the SVG text is half the size
      f.x = Math.round(f.x * 10) / 10; f.y = Math.round(f.y * 10) / 10;
      f.w = Math.round(f.w * 10) / 10; f.h = Math.round(f.h * 10) / 10;
    });
    var box = size["s-1"];
    var minX = -8, minY = -8, width = box[0] + 16, height = box[1] + 16;
    var out = ['<svg class="vg-graph vg-drawn" viewBox="', [minX, minY, width, height].join(" "),
               '"><defs><marker id="vg-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" ',
               'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto"><path d="M0 0L8 4L0 8z" fill="black" stroke="black"/>',
               '</marker></defs><g class="graph"><polygon fill="white" stroke="transparent" points="',
               [minX, minY, minX + width, minY, minX + width, minY + height, minX, minY + height].join(" "), '"/>'];
    frames.sort(function (p, q) { return depthOf[p.scope] - depthOf[q.scope]; });
    frames.forEach(function (f) {            // outer boxes first, so inner ones are on top
      out.push('<rect class="vg-frame" data-scope="', f.scope, '" fill="none" rx="4" x="',
               f.x, '" y="', f.y, '" width="', f.w, '" height="', f.h, '"/>');
    });
    /* ports: a box's edges leave (and arrive) spread over its width, ordered by the
     * other end's x, so converging edges and their labels do not pile up on one point */
    var drawn = input.edges.filter(function (e) {
      var a = at[e[0]], b = at[e[1]];
      return a !== undefined && b !== undefined && a !== b;
    });
    var outPort = new Float64Array(drawn.length), inPort = new Float64Array(drawn.length);
    function spread(end, other, port) {
      var by = {};
      drawn.forEach(function (e, k) { var v = at[e[end]]; (by[v] = by[v] || []).push(k); });
      Object.keys(by).forEach(function (v) {
        var list = by[v], m = list.length;
        list.sort(function (p, q) { return x[at[drawn[p][other]]] - x[at[drawn[q][other]]] || p - q; });
        list.forEach(function (k, j) { port[k] = x[v] + (m > 1 ? w[v] * 0.8 * ((j + 0.5) / m - 0.5) : 0); });
      });
    }
    spread(0, 1, outPort); spread(1, 0, inPort);
    function r1(v) { return Math.round(v * 10) / 10; }
    /* through the stand-ins of the rows an edge skips, where the layout made room: each
     * stretch between rows an S-curve, each row crossed straight down */
    function through(d, at, via, o) {        // at: [x, y] the path is at; returns where it ends
      via.forEach(function (p) {
        var vx = r1(o[0] + p[0]), top = o[1] + p[1], bottom = o[1] + p[2], m1 = (at[1] + top) / 2;
        d.push("C", at[0], " ", m1, " ", vx, " ", m1, " ", vx, " ", top, "L", vx, " ", bottom);
        at = [vx, bottom];
      });
      return at;
    }
    /* a hub's trunk: one path down its column, from the hub (out) or into it (in) */
    scopes.concat([-1]).forEach(function (s) {
      var placed = inner[s], o = origin[s];
      placed.trunks.forEach(function (t) {
        var k = t.end, cx = r1(o[0] + placed.x[k]), cy = o[1] + placed.y[k], half = placed.h[k] / 2;
        var p = t.points[0], at = t.out ? [cx, cy + half] : [r1(o[0] + p[0]), o[1] + p[1]];
        var d = ["M", at[0], " ", at[1]];
        at = through(d, at, t.out ? t.points : t.points.slice(1), o);
        if (!t.out) {
          var mid = (at[1] + cy - half) / 2;
          d.push("C", at[0], " ", mid, " ", cx, " ", mid, " ", cx, " ", cy - half);
        }
        out.push('<path class="vg-trunk" data-', t.out ? "from" : "to", '="', esc(input.ids[+placed.keys[k].slice(1)]),
                 '" fill="none" stroke="black"', t.out ? "" : ' marker-end="url(#vg-arrow)"', ' d="',
                 d.join(""), '"/>');
      });
    });
    var edgeLabels = [];
    drawn.forEach(function (e, k) {
      var a = at[e[0]], b = at[e[1]], arrow = !e[6];
      var x1 = r1(outPort[k]), y1 = y[a] + h[a] / 2, x2 = r1(inPort[k]), y2 = y[b] - h[b] / 2;
      if (y2 < y1) { y1 = y[a] - h[a] / 2; y2 = y[b] + h[b] / 2; }   // an edge closing a cycle: upwards
      var lifted = lift(a, b), placed = inner[lifted[0]], idx = placed.index, o = origin[lifted[0]];
      var pair = idx[lifted[1]] + ">" + idx[lifted[2]], joint = placed.bundled[pair];
      if (joint) {                           // leaves a hub's trunk below b's row, or joins it
        var t = placed.trunks[joint[0]], p = t.points[joint[1]];
        if (t.out) { x1 = r1(o[0] + p[0]); y1 = o[1] + p[2]; } else { x2 = r1(o[0] + p[0]); y2 = o[1] + p[1]; arrow = false; }
      }
      var d = ["M", x1, " ", y1], end = through(d, [x1, y1], placed.route[pair] || [], o);
      var px = end[0], mid = (end[1] + y2) / 2;
      d.push("C", px, " ", mid, " ", x2, " ", mid, " ", x2, " ", y2);
      out.push('<path class="edge" data-ends="', esc(e[0] + "->" + e[1]), '" fill="none" stroke="black"',
               e[5] ? ' stroke-dasharray="5,3"' : "", arrow ? ' marker-end="url(#vg-arrow)"' : "", ' d="',
               d.join(""), '"/>');
      if (e[2]) { edgeLabels.push([(px + x2) / 2 + 4, mid + 3, e[2]]); }
      if (e[3]) { edgeLabels.push([x1 + 4, y1 + 11, e[3]]); }
      if (e[4]) { edgeLabels.push([x2 + 4, y2 - 4, e[4]]); }
    });
    for (i = 0; i < n; i++) {
      var x0 = x[i] - w[i] / 2, y0 = y[i] - h[i] / 2;
      out.push('<g id="', esc(input.ids[i]), '" class="node"><polygon fill="', esc(input.fill(input.ids[i])),
               '" stroke="black" points="', [x0, y0, x0 + w[i], y0, x0 + w[i], y0 + h[i], x0, y0 + h[i]].join(" "),
               '"/></g>');
    }
    out.push('<g class="vg-text"></g></g></svg>');
    return {
      svg: out.join(""),
      map: { x: x, y: y, w: w, h: h, n: n, ids: input.ids, label: label, labelled: new Uint8Array(n),
             frames: frames, titles: frames.map(function (f) { return input.title(f.scope); }),
             framed: new Uint8Array(frames.length), edgeLabels: edgeLabels,
             edgeLabelled: new Uint8Array(edgeLabels.length) }
    };
  }

  /* Add the labels inside the visible rectangle (x0, y0)-(x1, y1) not added yet. */
  function labelIn(map, svg, nodeEl, x0, y0, x1, y1) {
    var i, j, text = [], layer = svg.querySelector("g.vg-text");
    for (i = 0; i < map.n; i++) {
      if (map.labelled[i] || map.x[i] + map.w[i] / 2 < x0 || map.x[i] - map.w[i] / 2 > x1 ||
          map.y[i] + map.h[i] / 2 < y0 || map.y[i] - map.h[i] / 2 > y1) { continue; }
      map.labelled[i] = 1;
      var top = map.y[i] - map.h[i] / 2, own = [];
      for (j = 0; j < map.label[i].length; j++) {
        own.push('<text text-anchor="middle" x="', map.x[i], '" y="', top + 14 + 12 * j,
                 '" font-family="monospace" font-size="10.00"', j ? ' class="vg-line"' : "", ">",
                 esc(map.label[i][j]), "</text>");
      }
      nodeEl(map.ids[i]).insertAdjacentHTML("beforeend", own.join(""));
    }
    for (i = 0; i < map.frames.length; i++) {
      var f = map.frames[i];
      if (map.framed[i] || f.x + f.w < x0 || f.x > x1 || f.y + f.h < y0 || f.y > y1) { continue; }
      map.framed[i] = 1;
      text.push('<text class="vg-scope-title" x="', f.x + 6, '" y="', f.y + 13, '" font-family="sans-serif" ',
                'font-size="11.00" data-scope="', f.scope, '">\u2212 ', esc(map.titles[i]), "</text>");
    }
    for (i = 0; i < map.edgeLabels.length; i++) {
      var e = map.edgeLabels[i];
      if (map.edgeLabelled[i] || e[0] < x0 - 200 || e[0] > x1 || e[1] < y0 || e[1] > y1 + 20) { continue; }
      map.edgeLabelled[i] = 1;
      text.push('<text class="vg-label" x="', e[0], '" y="', e[1], '" font-family="monospace" font-size="9.00">',
                esc(e[2]), "</text>");
    }
    if (text.length) { layer.insertAdjacentHTML("beforeend", text.join("")); }
  }

  return { compound: compound, labelIn: labelIn, esc: esc };
})();
