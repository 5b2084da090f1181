/* vizgrad's viewer: which boxes a fold state of the scope tree draws (no DOM here).
 * data.tree (vizgrad/render/viewer_tree.py): each scope's path and parent (parents
 * first; a scope run twice at the top level is two tree nodes, two boxes), a home scope
 * per graph node, and the stretches of repeated blocks.  A fold
 * state is one flag per scope (open or folded); a folded scope whose parents are all
 * open is drawn as one box, standing for every node under it. */
window.vizgradFold = function (data, nodes) {
  "use strict";
  var tree = data.tree;
  if (!tree) { return null; }
  var count = tree.parents.length, parents = tree.parents, s, i;
  var homeOf = {}, direct = [], children = [], boxes = {};
  for (s = 0; s < count; s++) { direct.push([]); children.push([]); }
  for (s = 0; s < count; s++) { if (parents[s] >= 0) { children[parents[s]].push(s); } }
  data.graph.nodes.forEach(function (n, k) {
    var at = tree.home[k];
    if (at >= 0) { homeOf[n.id] = at; direct[at].push(n.id); }
  });

  function members(scope) {                  // every node under scope
    var out = [], todo = [scope];
    while (todo.length) {
      var t = todo.pop();
      for (var k = 0; k < direct[t].length; k++) { out.push(direct[t][k]); }
      for (k = 0; k < children[t].length; k++) { todo.push(children[t][k]); }
    }
    return out;
  }
  function plural(n, word, many) { return n.toLocaleString("en") + " " + (n === 1 ? word : many || word + "s"); }
  function title(scope) {                    // a scope's name (a later run's: "(after ...)"); a stretch's span
    var stretch = tree.stretches[String(scope)], run = (tree.runs || {})[String(scope)] || "";
    return stretch ? tree.paths[scope] + " (" + stretch.title.replace(/^\.+ | \.+$/g, "") + ")" : tree.paths[scope] + run;
  }
  function box(scope) {                      // the box drawing folded scope (as fold.py's)
    if (boxes[scope]) { return boxes[scope]; }
    var inside = members(scope), ops = {}, opCount = 0, leaves = 0;
    inside.forEach(function (id) {
      var n = nodes[id];
      if (n.kind === "op" && n.title !== "AccumulateGrad") { ops[n.title] = (ops[n.title] || 0) + 1; opCount++; }
      else if (n.kind === "leaf") { leaves++; }
    });
    var stretch = tree.stretches[String(scope)], rows = [];
    var ranked = Object.keys(ops).sort(function (a, b) { return ops[b] - ops[a] || (a < b ? -1 : 1); });
    ranked.slice(0, 6).forEach(function (k) { rows.push([k, "x" + ops[k]]); });
    if (ranked.length > 6) {
      var rest = ranked.slice(6).reduce(function (sum, k) { return sum + ops[k]; }, 0);
      rows.push(["+" + (ranked.length - 6) + " more", plural(rest, "op")]);
    }
    var lines = stretch ? stretch.lines : [plural(opCount, "op") + (leaves ? ", " + plural(leaves, "leaf", "leaves") : "")];
    boxes[scope] = { kind: "group", title: stretch ? stretch.title : title(scope), lines: lines,
                     rows: stretch ? [] : rows, scope: scope, details: { members: inside, ops: ops } };
    return boxes[scope];
  }

  function fromLevel(level) {                // a level's folds: its boxes folded, and what is under them
    var folded = new Uint8Array(count), open = new Uint8Array(count);
    (level.folded || []).forEach(function (t) { folded[t] = 1; });
    for (s = 0; s < count; s++) { open[s] = folded[s] || (parents[s] >= 0 && !open[parents[s]]) ? 0 : 1; }
    return open;
  }
  function top(open) {                       // per scope: the folded scope drawing it, or -1
    var at = new Int32Array(count);
    for (s = 0; s < count; s++) {
      at[s] = parents[s] >= 0 && at[parents[s]] >= 0 ? at[parents[s]] : (open[s] ? -1 : s);
    }
    return at;
  }
  function key(open) {                       // the folded scopes drawn as boxes: same key, same drawing
    var at = top(open), shown = [];
    for (s = 0; s < count; s++) { if (at[s] === s) { shown.push(s); } }
    return shown.join(",");
  }
  function unfold(open, scope) {             // and a lone inner scope holding the same nodes
    open[scope] = 1;
    while (children[scope].length === 1 && !direct[scope].length) { scope = children[scope][0]; open[scope] = 1; }
  }
  function reveal(open, id) {                // open every scope holding node id
    for (s = homeOf[id] === undefined ? -1 : homeOf[id]; s >= 0; s = parents[s]) { open[s] = 1; }
  }

  /* What open draws: the boxes in document order (a folded scope where its first node
   * is), the open scope holding each, which box draws each folded node, and the edges
   * between boxes (a label kept where its consumer is drawn itself, as fold.py does). */
  function visible(open) {
    var at = top(open), ids = [], cont = [], owner = {}, drawn = {}, shownBoxes = {};
    data.graph.nodes.forEach(function (n) {
      var home = homeOf[n.id], item = n.id, holder = -1;
      if (home !== undefined) {
        if (at[home] >= 0) { item = "vg-s" + at[home]; owner[n.id] = item; holder = parents[at[home]]; } else { holder = home; }
      }
      if (!drawn[item]) {
        drawn[item] = true; ids.push(item); cont.push(holder);
        if (item !== n.id) { shownBoxes[item] = box(at[home]); }
      }
    });
    var edges = [], seen = {};
    data.graph.edges.forEach(function (e) {
      var a = owner[e.source] || e.source, b = owner[e.target] || e.target, both = a === e.source && b === e.target;
      var k = a + "\u0000" + b;
      if (a === b || !drawn[a] || !drawn[b] || (!both && seen[k])) { return; }
      seen[k] = true;                        // an edge of two drawn nodes stays (x * x: two)
      edges.push([a, b, b === e.target ? e.label || "" : "", both ? e.tail_label || "" : "",
                  both ? e.head_label || "" : "", e.style === "dashed" || e.style === "dotted", !!e.undirected]);
    });
    return { ids: ids, cont: cont, owner: owner, boxes: shownBoxes, edges: edges };
  }

  return { count: count, parents: parents, children: children, homeOf: homeOf, direct: direct,
           members: members, title: title, fromLevel: fromLevel, key: key, unfold: unfold,
           reveal: reveal, visible: visible };
};
