"""Scale and speed of big PyTorch pictures (#28): dot on ~1,000-box transformer graphs,
vizgrad's DOT vs torchviz's, and ``vizgrad render`` end to end on a Transformer LM.

``layout``: GPT-2 (12 layers) and BERT-base (12 layers) built from transformers' configs
with small hidden sizes (the node count is what matters), one forward with labels, the
loss's graph. Each contender's full DOT (vizgrad's ``make_dot(loss, max_nodes=None)``;
the same DOT with its xlabels forced (``forcelabels=true``, dot's default, drawn over
other texts); the same DOT without the graph attributes vizgrad sets on big pictures
(``nslimit``, ``forcelabels``), i.e. before #28; torchviz's ``make_dot(loss)`` without
its ``size`` attribute, which only scales the drawing) is laid out by ``dot -Tsvg`` in
turns for ``--rounds`` rounds; per row the median CPU seconds of the ``dot`` child and
the median of each round's ratio to torchviz's, and the picture's height in points from
``dot -Tdot``'s bounding box (unscaled), with its ratio to torchviz's.

``cli``: a script with an ``nn.Embedding``, an ``nn.TransformerEncoder`` of N layers
(d_model 32) and a decoder, one cross-entropy backward, rendered by ``python -m
vizgrad render -o OUT.svg`` in a fresh process per run, the variants in turns:
this checkout's default, this checkout with ``--no-capture`` and
``OMP_WAIT_POLICY=ACTIVE`` (the defaults before #28; its fold still runs on this tree),
and with ``--against PATH`` another checkout (``git worktree add PATH main``) run
as it is; ``--script-alone`` adds ``python SCRIPT`` itself (no vizgrad, with
``OMP_WAIT_POLICY=PASSIVE`` as the CLI runs it): the floor, mostly ``import torch``;
``--no-old-defaults`` leaves the ``--no-capture`` variant out.  Wall seconds and CPU
seconds (the process and its ``dot`` child) per run, median of the rounds; drawn boxes
from the CLI's summary line.

Run: ``python benchmarks/bench_render_scale.py`` (``--quick``: fewer rounds, 12 and 24
layers; ``--layers 12``: those sizes only).  torchviz is optional (``pip install
--no-deps torchviz``); transformers too.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))  # this checkout's vizgrad, whichever one is installed

LM_SCRIPT = '''
import sys
import torch
from torch import nn

LAYERS = int(sys.argv[1])
torch.manual_seed(0)


class LM(nn.Module):
    def __init__(self, vocab=100, d=32, heads=4, layers=LAYERS):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.decoder = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.decoder(self.encoder(self.embedding(tokens)))


model = LM()
tokens = torch.randint(0, 100, (2, 8))
logits = model(tokens)
loss = nn.functional.cross_entropy(logits.reshape(-1, 100), tokens.reshape(-1))
loss.backward()
'''


def transformer_losses() -> dict:
    """GPT-2 and BERT-base (12 layers each, hidden 32): each model's loss."""
    import torch
    import transformers
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 8))
    gpt2 = GPT2LMHeadModel(GPT2Config(n_layer=12, n_embd=32, n_head=4, vocab_size=100,
                                      n_positions=32, bos_token_id=0, eos_token_id=0))
    bert = BertForMaskedLM(BertConfig(num_hidden_layers=12, hidden_size=32,
                                      num_attention_heads=4, intermediate_size=64,
                                      vocab_size=100, max_position_embeddings=32))
    return {"GPT-2, 12 layers": gpt2(ids, labels=ids).loss,
            "BERT-base, 12 layers": bert(ids, labels=ids).loss}


def dot_seconds(source: str) -> float:
    """CPU seconds of ``dot -Tsvg`` on ``source`` (the child's own time)."""
    before = os.times()
    subprocess.run(["dot", "-Tsvg", "-o", os.devnull], input=source.encode(), check=True)
    after = os.times()
    return (after.children_user - before.children_user
            + after.children_system - before.children_system)


def bounding_box(source: str) -> tuple[float, float]:
    """The layout's width and height in points (``bb`` of ``dot -Tdot``, unscaled)."""
    laid = subprocess.run(["dot", "-Tdot"], input=source.encode(), check=True,
                          capture_output=True).stdout.decode()
    found = re.search(r'bb="[-\d.]+,[-\d.]+,([-\d.]+),([-\d.]+)"', laid)
    assert found is not None
    return float(found[1]), float(found[2])


def layout(rounds: int) -> None:
    import vizgrad

    try:
        import torchviz
    except ImportError:
        torchviz = None
        print("torchviz not installed: no ratios", file=sys.stderr)
    print("| graph | DOT | boxes | dot -Tsvg CPU s | x torchviz | height pt | x torchviz "
          "| width pt |\n|---|---|---:|---:|---:|---:|---:|---:|")
    for name, loss in transformer_losses().items():
        ours = vizgrad.make_dot(loss, max_nodes=None).source
        sources = {"vizgrad (#28: nslimit, forcelabels=false)": ours,
                   "vizgrad, xlabels forced (forcelabels=true)": ours.replace(
                       "forcelabels=false", "forcelabels=true"),
                   "vizgrad before #28 (no nslimit)": re.sub(r"\tgraph \[[^]]*\]\n", "", ours)}
        if torchviz is not None:
            theirs = torchviz.make_dot(loss).source
            sources["torchviz"] = re.sub(r'\bsize="[\d.,]+"', "", theirs)
        times: dict[str, list[float]] = {label: [] for label in sources}
        for turn in range(rounds):
            order = list(sources) if turn % 2 == 0 else list(reversed(sources))
            for label in order:
                times[label].append(dot_seconds(sources[label]))
        boxes = {label: len(re.findall(r"^\t\S+ \[label=", source, re.M))
                 for label, source in sources.items()}
        shapes = {label: bounding_box(source) for label, source in sources.items()}
        for label in sources:
            ratio = height = "-"
            if "torchviz" in sources:
                ratios = [a / b for a, b in zip(times[label], times["torchviz"])]
                ratio = f"{statistics.median(ratios):.2f}x"
                height = f"{shapes[label][1] / shapes['torchviz'][1]:.2f}x"
            print(f"| {name} | {label} | {boxes[label]:,} | {statistics.median(times[label]):.2f} "
                  f"| {ratio} | {shapes[label][1]:,.0f} | {height} | {shapes[label][0]:,.0f} |")


def script_alone(script: Path, layers: int) -> tuple[float, float, str]:
    """``python SCRIPT`` in a fresh process, no vizgrad: wall s, CPU s, no boxes."""
    environment = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    before, start = os.times(), time.perf_counter()
    subprocess.run([sys.executable, str(script), str(layers)], env=environment, check=True,
                   capture_output=True)
    wall, after = time.perf_counter() - start, os.times()
    return (wall, after.children_user - before.children_user + after.children_system
            - before.children_system, "-")


def cli_run(tree: Path, links: Path, script: Path, layers: int, out: Path, extra: list[str],
            env: dict[str, str]) -> tuple[float, float, str]:
    """One ``vizgrad render`` in a fresh process: wall s, CPU s (with children), boxes;
    a tree from before the CLI moved into the package (``cli/``, run as ``vizgrad_cli``)
    is run through ``links``, which holds ``vizgrad_cli``, a link to that ``cli/``."""
    paths = [str(tree), str(links)]
    environment = dict(os.environ, **env, PYTHONPATH=os.pathsep.join(paths))
    module = "vizgrad_cli" if (links / "vizgrad_cli").exists() else "vizgrad"
    before, start = os.times(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", module, "render", *extra, "-o",
                           str(out), str(script), "--", str(layers)], env=environment,
                          capture_output=True, text=True, cwd=tree)
    wall, after = time.perf_counter() - start, os.times()
    if done.returncode != 0:
        raise SystemExit(f"vizgrad render failed in {tree}:\n{done.stderr}")
    found = re.search(r"drawn as (\d+) boxes", done.stdout)
    return (wall, after.children_user - before.children_user + after.children_system
            - before.children_system, found[1] if found else "?")


def cli(sizes: list[int], rounds: int, against: str | None, alone: bool = False,
        old_defaults: bool = True) -> None:
    trees: dict[str, tuple[Path, list[str], dict[str, str]]] = {
        "this checkout": (HERE, [], {})}
    if old_defaults:
        trees["--no-capture, OMP_WAIT_POLICY=ACTIVE"] = (
            HERE, ["--no-capture"], {"OMP_WAIT_POLICY": "ACTIVE"})
    if alone:
        trees["python SCRIPT alone"] = (HERE, [], {})
    if against:
        trees["--against tree"] = (Path(against).resolve(), [], {})
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        script = work / "lm.py"
        script.write_text(LM_SCRIPT, encoding="utf-8")
        links = {}
        for number, (label, (tree, _, _)) in enumerate(trees.items()):
            links[label] = work / f"path{number}"
            links[label].mkdir()
            if (tree / "cli" / "main.py").is_file():  # an older tree: `python -m vizgrad_cli`
                (links[label] / "vizgrad_cli").symlink_to(tree / "cli")
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
        print("| layers | variant | boxes drawn | wall s (median) | CPU s (median) |"
              "\n|---:|---|---:|---:|---:|")
        for layers in sizes:
            found: dict[str, list[tuple[float, float, str]]] = {k: [] for k in trees}
            for turn in range(rounds):
                order = list(trees) if turn % 2 == 0 else list(reversed(trees))
                for label in order:
                    tree, extra, env = trees[label]
                    found[label].append(
                        script_alone(script, layers) if label == "python SCRIPT alone"
                        else cli_run(tree, links[label], script, layers, work / "g.svg",
                                     extra, env))
            for label, runs in found.items():
                print(f"| {layers} | {label} | {runs[0][2]} | "
                      f"{statistics.median(r[0] for r in runs):.2f} | "
                      f"{statistics.median(r[1] for r in runs):.2f} |")
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["layout", "cli"])
    parser.add_argument("--against", metavar="PATH", help="another checkout, for the CLI")
    parser.add_argument("--layers", type=int, nargs="+", help="the CLI's script sizes")
    parser.add_argument("--script-alone", action="store_true",
                        help="also time python SCRIPT without vizgrad")
    parser.add_argument("--no-old-defaults", action="store_true",
                        help="leave out the --no-capture, OMP_WAIT_POLICY=ACTIVE variant")
    args = parser.parse_args()
    rounds = 2 if args.quick else args.rounds
    if args.only in (None, "layout"):
        layout(rounds)
    if args.only in (None, "cli"):
        sizes = args.layers or ([12, 24] if args.quick else [12, 24, 96])
        cli(sizes, rounds, args.against, args.script_alone, not args.no_old_defaults)


if __name__ == "__main__":
    main()
