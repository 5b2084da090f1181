"""DDP on two gloo ranks (CPU, 127.0.0.1): which parameters got no gradient on which
rank, and from which line, named before the all-reduce hides it or PyTorch fails."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

import vizgrad  # noqa: E402

# each test starts two ranks (two interpreters importing torch): tens of seconds
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("ddp_worker.py")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(mode: str, out: Path) -> dict[int, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    port = _free_port()
    ranks = [subprocess.Popen([sys.executable, str(WORKER), str(rank), "2", str(port), mode,
                               str(out)], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for rank in (0, 1)]
    try:
        logs = [rank.communicate(timeout=120)[0] for rank in ranks]
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
    assert [rank.returncode for rank in ranks] == [0, 0], logs
    return {rank: json.loads((out / f"result.{rank}.json").read_text()) for rank in (0, 1)}


EXTRA = ["extra.weight", "extra.bias"]


def _forward_line() -> int:
    source = WORKER.read_text().splitlines()
    return next(number for number, line in enumerate(source, 1)
                if "self.extra(h)" in line)


def test_find_unused_true_the_skip_is_named_though_the_reduce_hides_it(tmp_path) -> None:
    results = _run("unused_true", tmp_path)
    for rank in (0, 1):
        # the comparison, the same on every rank: rank 1's graph lacks extra.*
        assert results[rank]["missing"] == {"0": [], "1": EXTRA}
        assert results[rank]["differ"] == EXTRA
        assert results[rank]["lines"]["extra.weight"] == \
            f"{WORKER}:{_forward_line()} in forward"
    # measured per rank before the all-reduce: rank 1 computed no gradient for extra.*
    assert results[0]["no_grad"] == [] and results[1]["no_grad"] == EXTRA
    assert any("rank 1: 2 parameter(s) got no gradient" in w for w in results[1]["warnings"])
    # ... while after DDP's all-reduce rank 1 holds a gradient for it all the same
    assert results[1]["extra_grad_after_reduce"] > 0
    assert "rank 1: 2 parameter(s) not in this rank's graph" in results[0]["text"]
    # one graph file per rank, never the same file from both
    assert (tmp_path / "graph.rank0.json").exists() and (tmp_path / "graph.rank1.json").exists()
    assert not (tmp_path / "graph.json").exists()
    views = [vizgrad.render.load_view(tmp_path / f"graph.rank{rank}.json") for rank in (0, 1)]
    assert len(views[0].nodes) > len(views[1].nodes)
    # graph_diff over the two ranks' saved graphs names what rank 1 skipped, and only that
    diff = vizgrad.debug.graph_diff(tmp_path / "graph.rank0.json",
                                    tmp_path / "graph.rank1.json")
    assert not diff.added
    removed = {(item["name"], item["scope"]): item["count"] for item in diff.removed}
    assert removed == {("AccumulateGrad (extra.bias)", ""): 1,
                       ("AccumulateGrad (extra.weight)", ""): 1,
                       ("AddmmBackward0", "extra"): 1, ("TBackward0", "extra"): 1,
                       ("AddBackward0", ""): 1}  # (the "out + extra(h)" itself)
    assert "- AccumulateGrad (extra.weight)" in str(diff)
    assert "- AddmmBackward0 [extra]" in str(diff)
    assert "saved graph" in diff.compared_by


def test_find_unused_false_named_before_pytorch_fails_a_step_later(tmp_path) -> None:
    results = _run("unused_false", tmp_path)
    one = results[1]
    assert "Expected to have finished reduction" in one["torch_error"]
    assert one["missing"]["1"] == EXTRA and one["no_grad"] == EXTRA
    warned = "\n".join(one["warnings"])
    assert "the ranks' graphs differ" in warned and "extra.weight (module extra)" in warned
    assert f"{WORKER}:{_forward_line()}" in warned


def test_the_gallery_ddp_script_reports_the_skipped_layer() -> None:
    script = ROOT / "gallery" / "train_ddp_skipped_layer.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=ROOT, timeout=180,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    line = next(number for number, text in enumerate(script.read_text().splitlines(), 1)
                if "self.aux(h)" in text)
    assert "rank 1: 2 parameter(s) not in this rank's graph" in done.stdout
    assert f"aux.weight (module aux) at {script}:{line} in forward" in done.stdout
    assert "step 1, rank 1: no gradient before the all-reduce: ['aux.weight', 'aux.bias']" \
        in done.stdout
    assert "step 1, rank 0: no gradient before the all-reduce: none" in done.stdout
    assert "RankWarning" not in done.stderr  # printed by the script, not warned twice


RENDERED = """
import sys
import datetime
import torch
import torch.distributed as dist

rank, port = int(sys.argv[1]), int(sys.argv[2])
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                        world_size=2, timeout=datetime.timedelta(seconds=60))
w = torch.ones(3, requires_grad=True)
loss = (w * (rank + 1)).exp().sum() if rank else (w * 2).sum()
loss.backward()
dist.destroy_process_group()        # gone before vizgrad draws
"""


def test_render_in_each_rank_of_a_process_group_writes_its_own_file(tmp_path) -> None:
    """No RANK/WORLD_SIZE in the environment: the script starts its group itself."""
    script = tmp_path / "ranks.py"
    script.write_text(RENDERED, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT)),
           "OMP_NUM_THREADS": "1"}
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    port = str(_free_port())
    ranks = [subprocess.Popen([sys.executable, "-m", "vizgrad", "render", "-o",
                               str(tmp_path / "graph.svg"), str(script), str(rank), port],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    try:
        outputs = [rank.communicate(timeout=120) for rank in ranks]
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
    assert [rank.returncode for rank in ranks] == [0, 0], outputs
    assert sorted(p.name for p in tmp_path.glob("*.svg")) == ["graph.rank0.svg",
                                                              "graph.rank1.svg"]
    assert "ExpBackward0" in (tmp_path / "graph.rank1.svg").read_text()
    assert "ExpBackward0" not in (tmp_path / "graph.rank0.svg").read_text()
