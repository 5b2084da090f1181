"""vizgrad + CuPy against PyTorch on a CUDA GPU (issue #19): training steps and small ops.

* MLP 784-256-256-10 (ReLU, cross-entropy, SGD) steps at batch 64, 1,024 and 8,192;
* CNN step (two conv+ReLU+max-pool, linear head), batch 32 of 1x28x28;
* a 1,000-op chain on 16-element tensors (forward + backward, per op): launch bound,
  so it measures each library's per-op overhead.

Each figure is the median of ``--steps`` timed steps after warm-up, the device
synchronised after every step, the two libraries taking turns step by step.
Without CuPy and a GPU it says so and exits.

Run: ``python benchmarks/bench_gpu.py`` (``--steps 50``); ``bash scripts/gpu_check.sh``
runs it after the CUDA tests.  ``--profile`` explains the table instead: for each
workload and library, kernels launched per step, the GPU's busy time per step (sum of
kernel times, from PyTorch's CUDA profiler, which sees CuPy's kernels too) against the
step's wall time, and the ten costliest kernels with their launches per step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _cupy():
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() else None
    except Exception:  # noqa: BLE001 - no CuPy, or CuPy without a driver
        return None


def _torch_cuda():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except ImportError:
        return None


def _medians_ms(steps_by_name: dict[str, tuple[Callable[[], None], Callable[[], None]]],
                steps: int) -> dict[str, float]:
    """Median ms per step of each ``(step, sync)``, the libraries taking turns step by
    step (each goes first every other turn), so a change in the host's load falls on
    both: the host, not the GPU, sets these times."""
    for step, sync in steps_by_name.values():
        for _ in range(3):
            step()
        sync()
    times: dict[str, list[float]] = {name: [] for name in steps_by_name}
    names = list(steps_by_name)
    for turn in range(steps):
        for name in (names if turn % 2 else names[::-1]):
            step, sync = steps_by_name[name]
            start = time.perf_counter()
            step()
            sync()
            times[name].append(time.perf_counter() - start)
    return {name: 1000 * statistics.median(found) for name, found in times.items()}


def _model(lib, workload: str):
    nn = lib.nn
    if workload == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def training_step(lib, workload: str, batch: int) -> Callable[[], None]:
    """One SGD step of ``workload`` in ``lib`` (vizgrad or torch), data on the GPU."""
    lib.manual_seed(0)
    model = _model(lib, workload).to("cuda")
    rng = np.random.default_rng(0)
    shape = (batch, 784) if workload == "mlp" else (batch, 1, 28, 28)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32), device="cuda")
    y = lib.tensor(rng.integers(0, 10, batch), device="cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def chain_step(lib, ops: int = 1000) -> Callable[[], None]:
    """``ops`` small elementwise ops forward, then backward: the per-op overhead."""
    x = lib.ones(16, device="cuda", requires_grad=True)

    def step() -> None:
        y = x
        for _ in range(ops // 2):
            y = y * 1.0001 + 0.5
        y.sum().backward()

    return step


def profile(libraries: dict, rows: list, steps: int = 5, top: int = 10) -> None:
    """Per workload and library: kernels per step, GPU busy time per step and the wall
    time, then the ``top`` kernels by GPU time with their launches per step (PyTorch's
    CUDA profiler, which sees CuPy's kernels too)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    for title, make, _ in rows:
        print(f"\n{title}")
        for name, (lib, sync) in libraries.items():
            step = make(lib)
            for _ in range(3):
                step()
            sync()
            with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
                start = time.perf_counter()
                for _ in range(steps):
                    step()
                sync()
                wall = (time.perf_counter() - start) / steps
            kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
            busy = sum(e.time_range.elapsed_us() for e in kernels) / steps / 1000
            print(f"  {name:<14} wall {1000 * wall:7.3f} ms/step, GPU busy {busy:7.3f} ms, "
                  f"{len(kernels) / steps:6.0f} kernels/step")
            for line in kernel_table(kernels, steps, top):
                print("    " + line)


def kernel_table(kernels: list, steps: int, top: int = 10) -> list[str]:
    """The ``top`` kernels (by name) by GPU time: launches and microseconds per step."""
    launches: dict[str, int] = {}
    micros: dict[str, float] = {}
    for event in kernels:
        launches[event.name] = launches.get(event.name, 0) + 1
        micros[event.name] = micros.get(event.name, 0.0) + event.time_range.elapsed_us()
    lines = [f"{'launches/step':>13} {'us/step':>9}  kernel"]
    for kernel in sorted(micros, key=micros.__getitem__, reverse=True)[:top]:
        lines.append(f"{launches[kernel] / steps:13.1f} {micros[kernel] / steps:9.1f}  "
                     f"{kernel[:90]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--profile", action="store_true",
                        help="kernels and GPU busy time per step instead of the table")
    args = parser.parse_args()
    cupy, torch = _cupy(), _torch_cuda()
    if cupy is None:
        print("bench_gpu: needs CuPy and a CUDA GPU (pip install 'vizgrad[gpu]'); "
              "nothing measured")
        return
    import vizgrad

    libraries = {"vizgrad+cupy": (vizgrad, cupy.cuda.Device().synchronize)}
    if torch is not None:
        libraries["pytorch cuda"] = (torch, torch.cuda.synchronize)
    else:
        print("note: PyTorch with CUDA is missing; its column is empty")
    rows = [(f"MLP step, batch {b} (ms)", lambda lib, b=b: training_step(lib, "mlp", b), 1)
            for b in (64, 1024, 8192)]
    rows.append(("CNN step, batch 32 (ms)", lambda lib: training_step(lib, "cnn", 32), 1))
    rows.append(("1,000-op chain, fwd+bwd (us per op)", chain_step, 1000 / 1000))
    if args.profile:
        if torch is None:
            print("bench_gpu --profile needs PyTorch with CUDA (its profiler)")
            return
        profile(libraries, rows)
        return
    names = list(libraries)
    print(f"GPU: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}; "
          f"median of {args.steps} steps, device synchronised after each, the libraries "
          "taking turns\n")
    print("| workload | " + " | ".join(names) + " | vizgrad / torch |")
    print("|---|" + "---:|" * (len(names) + 1))
    for title, make, per in rows:
        made = {name: (make(lib), sync) for name, (lib, sync) in libraries.items()}
        figures = {name: ms * per for name, ms in _medians_ms(made, args.steps).items()}
        cells = " | ".join(f"{figures[n]:.3f}" for n in names)
        ratio = (f"{figures['vizgrad+cupy'] / figures['pytorch cuda']:.2f}x"
                 if "pytorch cuda" in figures else "-")
        print(f"| {title} | {cells} | {ratio} |")


if __name__ == "__main__":
    main()
