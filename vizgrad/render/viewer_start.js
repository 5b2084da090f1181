/* vizgrad's viewer: the level a page opens at, for the reader's window.  The page was
 * saved opening at data.start (viewer.default_level, for a window of WINDOW_ASPECT);
 * with data.pick (viewer.open_rule: no collapse depth asked) the same rule runs again
 * with the canvas's own width / height: of the levels Graphviz drew with at most
 * pick.limit boxes, the finest whose drawing is at most pick.aspect times wider than
 * the window's shape across its ranks (pick.across: "width" for ranks running down,
 * "height" for rankdir LR), else the best shaped (the finer on a tie).  A 96-layer
 * model's depth-4 level, 33 times wider than tall, is not opened on; a tall chain is
 * (the page opens at its output, the reader follows the edges up). */
window.vizgradFirstLevel = function (data, canvas) {
  "use strict";
  var pick = data.pick;
  if (!pick) { return data.start; }
  var aspect = (canvas.clientWidth || 1) / (canvas.clientHeight || 1);
  var shaped = -1, best = -1, bestOff = Infinity;
  data.levels.forEach(function (level, i) {
    if (!level.size || level.layout !== "graphviz" || level.count > pick.limit) { return; }
    var ratio = level.size[0] / level.size[1] / aspect;
    var off = pick.across === "width" ? ratio : 1 / ratio;
    if (off <= pick.aspect) { shaped = i; }          // levels go coarse to fine
    if (off <= bestOff) { bestOff = off; best = i; }
  });
  return shaped >= 0 ? shaped : best >= 0 ? best : data.start;
};
