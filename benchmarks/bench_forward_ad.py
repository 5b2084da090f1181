"""Forward-mode AD and checkpointing, measured.

* ``checkpoint``: peak saved bytes (``memory_report(loss)``: total and activations) of an 8-block
  MLP (Linear 256 -> 256, Tanh; batch 128, float32) run plainly, with each block
  checkpointed, and with ``checkpoint_sequential`` in 2 segments.  Target: the
  per-block checkpointed graph keeps at most 1/3 of the plain one's bytes.
* ``jvp``: the 1,000-op chain of ``bench_core.py`` (``(y * w + b).tanh()``, 16 float32
  elements) as a forward with tangents (``forward_ad``) against two forwards: without
  grad (arrays only) and recording its graph (what ``bench_core.py`` times), best of
  ``--repeats``.  Target: JVP at most 2.5x the forward.

Run: ``python benchmarks/bench_forward_ad.py`` (``--steps 1000 --repeats 7``).
"""

from __future__ import annotations

import argparse
import json
import time

import vizgrad
from vizgrad.utils.checkpoint import checkpoint, checkpoint_sequential


def saved_bytes(blocks: int = 8, width: int = 256, batch: int = 128) -> dict[str, dict]:
    vizgrad.manual_seed(0)
    model = vizgrad.nn.Sequential(*[vizgrad.nn.Sequential(vizgrad.nn.Linear(width, width),
                                                          vizgrad.nn.Tanh())
                                    for _ in range(blocks)])
    x = vizgrad.randn(batch, width, requires_grad=True)

    def report(y: vizgrad.Tensor) -> dict[str, int]:
        found = vizgrad.debug.memory_report((y ** 2).mean())
        # total: every saved buffer (parameters included, which the plain graph saves
        # and the checkpointed one holds as handles); activations: less saved leaves
        return {"total_bytes": found.total_bytes, "activation_bytes": found.activation_bytes}

    per_block = x
    for block in model:
        per_block = checkpoint(block, per_block, use_reentrant=False)
    return {"plain": report(model(x)), "checkpoint_each_block": report(per_block),
            "checkpoint_sequential_2": report(checkpoint_sequential(model, 2, x,
                                                                    use_reentrant=False))}


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def jvp_chain(steps: int = 1000, repeats: int = 7) -> dict[str, float]:
    from vizgrad.autograd import forward_ad as fwAD

    vizgrad.manual_seed(0)
    x, w, b = (vizgrad.randn(16) for _ in range(3))
    tangent = vizgrad.randn(16)

    def forward() -> None:
        y = x
        for _ in range(steps):
            y = (y * w + b).tanh()

    def jvp() -> None:
        with fwAD.dual_level():
            y = fwAD.make_dual(x, tangent)
            for _ in range(steps):
                y = (y * w + b).tanh()
            assert fwAD.unpack_dual(y).tangent is not None

    def recorded() -> None:  # bench_core's forward: the chain recording its graph
        xr, wr, br = (t.detach().requires_grad_(True) for t in (x, w, b))
        y = xr
        for _ in range(steps):
            y = (y * wr + br).tanh()

    plain = _best(forward, repeats)
    graph = _best(recorded, repeats)
    dual = _best(jvp, repeats)
    return {"forward_no_grad_ms": plain * 1e3, "forward_recorded_ms": graph * 1e3,
            "jvp_ms": dual * 1e3, "ratio_to_no_grad": dual / plain,
            "ratio_to_recorded": dual / graph}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=["checkpoint", "jvp"], default=None)
    args = parser.parse_args()
    results: dict = {}
    if args.only in (None, "checkpoint"):
        results["checkpoint"] = found = saved_bytes()
        found["ratio_each_block"] = {
            key: found["checkpoint_each_block"][key] / found["plain"][key]
            for key in ("total_bytes", "activation_bytes")}
    if args.only in (None, "jvp"):
        results["jvp"] = jvp_chain(args.steps, args.repeats)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
