"""Forward-mode AD and checkpointing, measured.

* ``checkpoint``: peak saved bytes (``memory_report(loss)``: total and activations) of an 8-block
  MLP (Linear 256 -> 256, Tanh; batch 128, float32) run plainly, with each block
  checkpointed, and with ``checkpoint_sequential`` in 2 segments.  Target: the
  per-block checkpointed graph keeps at most 1/3 of the plain one's bytes.
* ``jvp``: the 1,000-op chain of ``bench_core.py`` (``(y * w + b).tanh()``, 16 float32
  elements) as a forward with tangents (``forward_ad``) against two forwards: without
  grad (no input requires grad) and recording its graph (what ``bench_core.py`` times):
  the three take turns ``--repeats`` times, each figure the least CPU time.  Target: JVP
  at most 2.5x the forward.  ``--against GIT_REF`` gives before/after in one run: that
  ref's vizgrad and this tree's, in fresh interpreters taking turns ``--rounds`` times
  (each time the least over rounds, the ratios those times').

Run: ``python benchmarks/bench_forward_ad.py`` (``--steps 1000 --repeats 7``);
``python benchmarks/bench_forward_ad.py --against 1a9b51a`` (before/after).
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


def _cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def jvp_chain(steps: int = 1000, repeats: int = 7) -> dict[str, float]:
    """The three runs take turns ``repeats`` times; each figure is the least CPU time
    (``time.process_time``: what the run cost, whatever else the machine was doing)."""
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

    runs: dict[str, list[float]] = {"forward": [], "recorded": [], "jvp": []}
    forward(), jvp(), recorded()  # warm up
    for _ in range(repeats):
        for name, fn in (("forward", forward), ("jvp", jvp), ("recorded", recorded)):
            runs[name].append(_cpu(fn))
    plain, graph, dual = (min(runs[name]) for name in ("forward", "recorded", "jvp"))
    return {"forward_no_grad_cpu_ms": plain * 1e3, "forward_recorded_cpu_ms": graph * 1e3,
            "jvp_cpu_ms": dual * 1e3, "ratio_to_no_grad": dual / plain,
            "ratio_to_recorded": dual / graph}


def against(ref: str, rounds: int, steps: int, repeats: int) -> dict:
    """Before/after in one run: this tree's ``jvp_chain`` and that of git ``ref``
    (``git archive``d to a temporary folder), in fresh interpreters taking turns."""
    import os
    import pathlib
    import subprocess
    import sys
    import tempfile

    root = pathlib.Path(__file__).resolve().parent.parent
    found: dict[str, list[dict]] = {ref: [], "this tree": []}
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(root), "archive", ref, "vizgrad"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        command = [sys.executable, str(pathlib.Path(__file__).resolve()), "--only", "jvp",
                   "--steps", str(steps), "--repeats", str(repeats)]
        for _ in range(rounds):
            for name, path in ((ref, folder), ("this tree", str(root))):
                env = dict(os.environ, PYTHONPATH=path)
                out = subprocess.run(command, check=True, capture_output=True, text=True,
                                     env=env).stdout
                found[name].append(json.loads(out)["jvp"])
    out = {}
    for name, runs in found.items():  # the least time over rounds; ratios of those
        best = {key: min(run[key] for run in runs) for key in runs[0] if key.endswith("_ms")}
        best["ratio_to_no_grad"] = best["jvp_cpu_ms"] / best["forward_no_grad_cpu_ms"]
        best["ratio_to_recorded"] = best["jvp_cpu_ms"] / best["forward_recorded_cpu_ms"]
        out[name] = best
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=["checkpoint", "jvp"], default=None)
    parser.add_argument("--against", metavar="GIT_REF", default=None,
                        help="the jvp chain before (GIT_REF) and after (this tree), taking "
                             "turns in fresh interpreters")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.against:
        print(json.dumps(against(args.against, args.rounds, args.steps, args.repeats),
                         indent=2))
        return
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
