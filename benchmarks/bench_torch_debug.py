"""What vizgrad's debugging tools cost a real PyTorch training step (issue 27).

A tiny GPT-2 (tests/torch/real_models.py: transformers' ``GPT2LMHeadModel`` from a
config, 2 layers, hidden 32, vocab 100, batch 2 x 8 tokens, ``use_cache=True``) or the
corpus' other models, or (``--model gpt2-cpu-run``) the GPT-2 that nanoGPT's README
trains on a CPU (4 layers, width 128, 12 x 64 characters), trained with Adam.  Two
kinds of step take turns, step by step, in one loop:

* ``plain``: ``zero_grad``, forward, ``loss.backward()``, ``optimizer.step()``;
* ``watched``: the same with ``GraphMonitor.step(loss)`` every step and
  ``GraphSaver(every=100).backward(loss)`` (``watch_grads`` hooks every node on each
  100th watched step, whose graph JSON, gradient statistics and, with ``--svg``, the
  picture are written by the recorder's worker).

On a machine whose speed drifts, each watched step has a plain step a few
milliseconds before it.  The figures are the mean wall time of each kind and their
ratio (means: the recorded steps are rare and long, a median would drop them); the
target is at most 1.10x.  Also the median over blocks of 100 pairs of each block's
ratio of sums (each block holds one recorded step): on a shared machine a burst of
load moves the whole run's ratio, not that median.  One torch thread.

``--detail-every N`` gives the monitor ``GraphMonitor(detail_every=N)`` (the depth and
saved bytes measured on the first, every N-th and every changed or warning step);
without it the monitor's default (10).

Run: ``python benchmarks/bench_torch_debug.py`` (``--pairs 2000 --model gpt2``;
``--profile`` runs the watched steps alone under cProfile and prints the top of it).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import vizgrad  # noqa: E402
from tests.torch.real_models import NAMES, Case, _lm_loss, build  # noqa: E402

#: The GPT-2 nanoGPT's README trains on a CPU (its "shakespeare-char" run with
#: ``--device=cpu``: 4 layers, 4 heads, width 128, blocks of 64 characters, batches of
#: 12, no dropout), from a transformers config: the benchmark's real training loop, next
#: to the test corpus' tiny models, whose 3 ms steps are the worst case for per-node costs.
CPU_RUN = "gpt2-cpu-run"


def _cpu_run_case() -> Case:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=65, n_positions=64, n_embd=128, n_layer=4, n_head=4,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=0, eos_token_id=0)
    ids = torch.randint(0, 65, (12, 64), generator=torch.Generator().manual_seed(1))
    return Case(CPU_RUN, GPT2LMHeadModel(config).train(),
                {"input_ids": ids, "labels": ids.clone()}, _lm_loss)


def _setup(name: str, svg: bool, detail_every: int | None = None):
    case = _cpu_run_case() if name == CPU_RUN else build(name)
    optimizer = torch.optim.Adam(case.model.parameters(), lr=1e-3)
    monitor = (vizgrad.debug.GraphMonitor() if detail_every is None
               else vizgrad.debug.GraphMonitor(detail_every=detail_every))
    recorder = vizgrad.debug.GraphSaver(every=100, model=case.model, svg=svg,
                                      out=tempfile.mkdtemp(prefix="vizgrad-bench-"))
    return case, optimizer, monitor, recorder


def _step(case, optimizer, monitor, recorder) -> None:
    optimizer.zero_grad()
    loss = case.loss()
    if monitor is not None:
        monitor.step(loss)
    if recorder is not None:
        recorder.backward(loss)
    else:
        loss.backward()
    optimizer.step()


def interleaved(name: str, pairs: int, svg: bool = False, watch: str = "both",
                detail_every: int | None = None) -> dict[str, float]:
    """Plain and watched steps taking turns; mean wall ms of each and their ratio.
    ``watch``: ``both``, or ``monitor`` / ``recorder`` alone (each one's share), or
    ``none`` (both kinds plain: the method's own error, which should give 1.00x)."""
    case, optimizer, monitor, recorder = _setup(name, svg, detail_every)
    if watch in ("recorder", "none"):
        monitor = None
    # warm up: plain steps, then 100 watched ones (the recorder's first record, which
    # starts its writer process once per run: a run of thousands of steps pays it once)
    for _ in range(20):
        _step(case, optimizer, None, None)
    for _ in range(100):
        _step(case, optimizer, monitor, recorder if watch in ("both", "recorder") else None)
    recorder.flush()
    records_before = len(recorder.written)
    gc.collect()
    times: list[list[float]] = [[], []]  # plain, watched: each step's wall time
    clock = time.perf_counter
    for index in range(2 * pairs):
        watching = index % 2 == 1
        start = clock()
        if watching:
            _step(case, optimizer, monitor, recorder if watch in ("both", "recorder") else None)
        else:
            _step(case, optimizer, None, None)
        times[watching].append(clock() - start)
    problems = recorder.close()
    plain, watched = sum(times[0]), sum(times[1])
    # the ratio of each block of 100 pairs (one record each): their median is not
    # moved by a burst of load on a shared machine, which the whole run's ratio is
    blocks = sorted(sum(times[1][i:i + 100]) / sum(times[0][i:i + 100])
                    for i in range(0, pairs - 99, 100))
    return {"plain_ms": plain / pairs * 1e3, "watched_ms": watched / pairs * 1e3,
            "ratio": watched / plain, "records": len(recorder.written) - records_before,
            "errors": len(problems),
            "block_ratio": blocks[len(blocks) // 2] if blocks else float("nan"),
            "blocks": len(blocks)}


def profile(name: str, steps: int, svg: bool = False, top: int = 30) -> None:
    case, optimizer, monitor, recorder = _setup(name, svg)
    for _ in range(10):
        _step(case, optimizer, None, None)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        _step(case, optimizer, monitor, recorder)
    profiler.disable()
    recorder.close()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2", choices=(*NAMES, CPU_RUN))
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=1,
                        help="whole interleaved runs, one after another")
    parser.add_argument("--watch", default="both", choices=("both", "monitor", "recorder", "none"),
                        help="what the watched steps run (default both; none: an A/A check)")
    parser.add_argument("--svg", action="store_true", help="the recorder draws its SVG too")
    parser.add_argument("--detail-every", type=int, default=None, metavar="N",
                        help="GraphMonitor(detail_every=N) (default: the monitor's own, 10)")
    parser.add_argument("--profile", type=int, default=0, metavar="STEPS",
                        help="profile STEPS watched steps instead of timing")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    if args.profile:
        profile(args.model, args.profile, args.svg)
        return
    every = "default" if args.detail_every is None else args.detail_every
    print(f"{args.model}: {args.pairs} pairs, watched: {args.watch} (GraphMonitor every step,"
          f" detail_every={every}, GraphSaver every 100,"
          f" {'with' if args.svg else 'no'} svg), one torch thread")
    for _ in range(args.repeats):
        result = interleaved(args.model, args.pairs, args.svg, args.watch, args.detail_every)
        print(f"plain {result['plain_ms']:.3f} ms, watched {result['watched_ms']:.3f} ms,"
              f" ratio {result['ratio']:.3f}x, median of {result['blocks']} blocks of 100"
              f" pairs {result['block_ratio']:.3f}x ({result['records']} records,"
              f" {result['errors']} errors)", flush=True)


if __name__ == "__main__":
    main()
