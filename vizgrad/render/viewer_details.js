/* vizgrad's viewer: the details panel for the selected box (a node: its facts,
 * inputs and consumers with slot.rank, output bytes, saved tensors, arguments, gradient and
 * forward stack; a group: its ops and members).  No DOM outside the panel; what it
 * needs from the page comes in ctx: data, nodes, inEdges, outEdges, panel,
 * drawing() (what is shown), select(id, move), unfold(), fold(), foldTarget() (the
 * open scope the selection can fold, or undefined) and scopeTitle(scope).
 * User text is only ever shown with textContent. */
window.vizgradDetails = function (ctx) {
  "use strict";
  var data = ctx.data, nodes = ctx.nodes, inEdges = ctx.inEdges, outEdges = ctx.outEdges;
  var details = ctx.panel;

  function add(parent, tag, text, cls) {
    var el = document.createElement(tag);
    if (text !== undefined && text !== null) { el.textContent = text; }
    if (cls) { el.className = cls; }
    parent.appendChild(el);
    return el;
  }
  function labelOf(id) {
    var drawn = ctx.drawing(), n = nodes[id] || (drawn && drawn.boxes[id]);
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
    b.addEventListener("click", function () { ctx.select(id, true); });
    return b;
  }
  function showDetails(id, shown) {
    details.textContent = "";
    var n = nodes[id], box = ctx.drawing().boxes[id], extra = data.extra[id] || {};
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
    if (shown === id) { foldButton(); }
    var sizes = extra.out_bytes || [];        // each output's bytes (shape x itemsize)
    table(details, "Forward outputs (gradients in)", (d.outputs || []).map(function (o, i) {
      return ["#" + i, shape(o.shape) + " " + o.dtype + (sizes[i] !== undefined && sizes[i] !== null
        ? " \u00b7 " + bytes(sizes[i]) : "")];
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
    table(details, "Arguments (saved by forward)", extra.attrs || []);
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
  function foldButton() {                   // fold the open scope holding the selection
    var scope = ctx.foldTarget();
    if (scope === undefined) { return; }
    var b = add(details, "button", "Fold " + ctx.scopeTitle(scope) + " (f)", "vg-action");
    b.type = "button"; b.addEventListener("click", ctx.fold);
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
    b.type = "button"; b.addEventListener("click", ctx.unfold);
    foldButton();
    table(details, "Members" + (members.length > 200 ? " (first 200)" : ""),
      members.slice(0, 200).map(function (m) { return [link(m)]; }));
  }

  return { add: add, labelOf: labelOf, show: showDetails };
};
