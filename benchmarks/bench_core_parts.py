"""Where one op of ``bench_core.py``'s chain spends its forward time, part by part.

The chain's step is ``(y * w + b).tanh()`` on 16-element float32 tensors.  Each part
below is timed on its own, in this interpreter, as CPU time per op (the least of
``--repeats`` loops of ``--ops`` ops, the loop's own cost subtracted); the parts that
cannot run alone are differences of whole-op timings:

* NumPy's own work (``*``, ``+``, ``tanh``: their mean);
* stack capture: the whole op with capture on minus with it off;
* making the node (``object.__new__`` and the slots ``Function.apply`` fills);
* making the output Tensor (``Tensor._make``);
* saving for backward (``save_for_backward`` and ``resolve_saved``; two ops in three
  save: ``*`` its operands, ``tanh`` its output);
* the cyclic GC during forward: the whole op with the GC on minus paused (a
  difference of two timings, so noisy; the collections counted per generation
  while a 1,000- and a 20,000-op chain are built follow it);
* the rest: the whole op (GC paused) minus the parts above, i.e. the operator and
  ``Function.apply`` themselves: dispatch, the argument pass that links edges, the
  metadata (layout, result shape, scope) and the checks.

Run: ``python benchmarks/bench_core_parts.py`` (``--ops 3000 --repeats 15``).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

import numpy as np

import vizgrad
from vizgrad.core.node import SEQUENCE
from vizgrad.core.saving import resolve_saved
from vizgrad.core.tensor import Tensor
from vizgrad.ops.activations import Tanh
from vizgrad.ops.arithmetic import Mul


def _cpu(loops: dict[str, tuple[Callable[[int], object], bool, bool]], ops: int,
         repeats: int) -> dict[str, float]:
    """Least CPU time of each ``loop(ops)`` over ``repeats`` turns, in microseconds per
    op; the loops take turns, so a busy moment on the machine hits them all alike.
    Each loop comes with (stack capture on, cyclic GC on)."""
    best = dict.fromkeys(loops, float("inf"))
    for _ in range(repeats):
        for name, (loop, stack, collect) in loops.items():
            with vizgrad.capture_stack(stack):
                if not collect:
                    gc.disable()
                start = time.process_time()
                kept = loop(ops)  # (a graph is freed after the clock stops)
                best[name] = min(best[name], time.process_time() - start)
                del kept
                gc.enable()
    return {name: value / ops * 1e6 for name, value in best.items()}


def parts(ops: int, repeats: int) -> dict[str, float]:
    vizgrad.manual_seed(0)
    x, w, b = (vizgrad.randn(16, requires_grad=True) for _ in range(3))
    y = (x * w + b).tanh()
    a, c = y.array, w.array
    new = object.__new__

    def empty(n: int) -> None:
        for _ in range(n):
            pass

    def chain(n: int) -> Tensor:
        z = x
        for _ in range(n // 3):
            z = (z * w + b).tanh()
        return z

    def numpy_ops(n: int) -> None:
        for _ in range(n // 3):
            np.tanh(a * c + c)

    def nodes(n: int) -> None:
        node_class = Mul._node_class
        for _ in range(n):
            node = new(node_class)
            node.seq = next(SEQUENCE)
            node.fn = Mul
            node._next_nodes = (None, None)
            node._next_nrs = (0, 0)
            node._grad_mask = 3
            node._to_save = None
            node._saved = None
            node._store = None
            node._freed = False
            node._layout = ()
            node._result_meta = ()
            node.scope = ""
            node._stack_code, node._stack_lasti, node._stack_tail = (None, 0, ())

    def tensors(n: int) -> None:
        for _ in range(n):
            Tensor._make(a, True, None, 0)

    def saving(n: int) -> None:  # n ops, two in three of which save
        mul_class, tanh_class = Mul._node_class, Tanh._node_class
        inputs = [y, w]
        for _ in range(n // 3):
            node = new(mul_class)
            node._to_save = None
            node.save_for_backward(a, c)
            resolve_saved(node, inputs, ())
            out = Tensor._make(a, True, None, 0)
            node = new(tanh_class)
            node._to_save = None
            node.save_for_backward(a)
            resolve_saved(node, [y], (out,))

    timed = _cpu({"loop": (empty, True, False), "numpy": (numpy_ops, True, False),
                  "whole": (chain, True, False), "off": (chain, False, False),
                  "whole_gc": (chain, True, True), "nodes": (nodes, True, False),
                  "tensors": (tensors, True, False), "saving": (saving, True, False)},
                 ops, repeats)
    loop = timed.pop("loop")
    timed = {name: value - loop for name, value in timed.items()}
    found = {"numpy's own work": timed["numpy"],
             "stack capture": timed["whole"] - timed["off"],
             "making the node": timed["nodes"],
             "making the output Tensor": timed["tensors"],
             # (the saving loop also makes the tanh output: one tensor per three ops)
             "saving for backward": timed["saving"] - timed["tensors"] / 3}
    found["the rest: operator + Function.apply"] = timed["whole"] - sum(found.values())
    found["whole op (stack on, GC paused)"] = timed["whole"]
    found["cyclic GC during forward"] = timed["whole_gc"] - timed["whole"]
    found["whole op (stack on, GC on)"] = timed["whole_gc"]
    return found


def collections(ops: int) -> dict[int, int]:
    """How many collections of each generation the cyclic GC runs while the chain's
    forward builds ``ops`` ops (a count: what the GC line above costs, without noise)."""
    vizgrad.manual_seed(0)
    x, w, b = (vizgrad.randn(16, requires_grad=True) for _ in range(3))
    counts = dict.fromkeys(range(3), 0)

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            counts[info["generation"]] += 1

    gc.collect()
    gc.callbacks.append(count)
    try:
        z = x
        for _ in range(ops // 3):
            z = (z * w + b).tanh()
    finally:
        gc.callbacks.remove(count)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print("forward microseconds per chain op (CPU time)")
    for name, value in parts(args.ops, args.repeats).items():
        print(f"{value:7.2f}  {name}")
    for ops in (1000, 20000):
        found = collections(ops)
        print(f"GC collections while a {ops}-op chain is built, by generation: "
              + ", ".join(f"{generation}: {n}" for generation, n in found.items()))


if __name__ == "__main__":
    main()
