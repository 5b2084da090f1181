"""The gallery: which example scripts render, with which options, and the index page.

``EXAMPLES`` is the manifest.  Each example is a script in ``gallery/`` rendered
exactly as ``vizgrad render`` would with the flags of :meth:`Example.flags`
(``Example.command()`` is the command line, as shown in gallery/README.md).

Example
-------
>>> report = build_gallery(find_gallery(), Path("gallery/out"), only=["concat_split"])
>>> report.index
PosixPath('gallery/out/index.html')
"""

from __future__ import annotations

import ast
import contextlib
import html
import importlib.util
import io
import os
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vizgrad
from vizgrad.debug.script_run import run_script
from vizgrad.debug.selection import script_parameters, select_roots
from vizgrad.debug.tracebacks import format_traceback

from .rendering import render_error, render_options, render_roots, render_static


@dataclass(frozen=True)
class Example:
    """One gallery picture: the script, a title, and the ``vizgrad render`` flags."""

    name: str
    title: str
    options: dict[str, Any] = field(default_factory=dict)
    step: int | None = None
    args: tuple[str, ...] = ()
    twin: str = ""  # a PyTorch example: the vizgrad example drawn beside it
    source: str = ""  # the script, when several examples draw graphs of one script

    @property
    def needs(self) -> str:
        """The optional package the script imports (``"torch"``), or ``""``."""
        return "torch" if self.twin or self.name.startswith("torch_") else ""

    @property
    def script(self) -> str:
        return f"{self.source or self.name}.py"

    def flags(self) -> list[str]:
        """The command-line flags for ``options`` and ``step``."""
        flags = [] if self.step is None else ["--step", str(self.step)]
        for key, value in self.options.items():
            flag = "--" + key.replace("_", "-")
            flags += [flag] if value is True else [flag, str(value)]
        return flags

    def command(self, out_dir: str = "gallery/out") -> str:
        """The ``vizgrad render`` command that makes this picture."""
        parts = ["vizgrad", "render", *self.flags(), "-o", f"{out_dir}/{self.name}.svg",
                 f"gallery/{self.script}", *self.args]
        return " ".join(parts)


EXAMPLES: list[Example] = [
    Example("mlp_digits", "An MLP on the digits data (step 5 of 5)", step=5),
    Example("cnn", "A small CNN, modules drawn as boxes", {"cluster": True}),
    Example("rnn", "An RNN unrolled over a sequence (shared weights)"),
    Example("lstm", "An LSTM over a sequence", {"cluster": True}),
    Example("attention", "A transformer block: attention, residuals, LayerNorm",
            {"cluster": True}),
    Example("concat_split", "cat and split: in N / out N edges", {"show_attrs": True}),
    Example("max_indices", "max with indices: two outputs, one gradient", {"show_attrs": True}),
    Example("view_inplace", "A view written in place (CopySlices)"),
    Example("custom_function", "A custom autograd Function", {"show_attrs": True}),
    Example("second_derivative", "A second derivative (create_graph=True)"),
    Example("checkpoint_mlp", "Activation checkpointing: plain vs checkpointed MLP, saved bytes",
            {"cluster": True, "show_saved": True}),
    Example("hvp_forward_over_reverse", "A Hessian-vector product: forward-over-reverse"),
    Example("grad_colours", "After backward(): colours by gradient norm", {"show_grad": True}),
    Example("training_loop", "A long training loop, captured at step 3 with --step", step=3),
    Example("debug_nan", "Debugging: a NaN from log(0), caught where it happened (--anomaly)",
            {"anomaly": True}),
    Example("debug_vanishing", "Debugging: vanishing gradients in a deep sigmoid MLP",
            {"show_grad": True}),
    Example("debug_rnn_detach", "Debugging: an RNN state never detached (GraphMonitor)"),
    Example("debug_forgotten_layer", "Debugging: a forgotten layer gets no gradient",
            {"show_grad": True}),
    Example("debug_inplace", "Debugging: a saved tensor modified in place (--anomaly)",
            {"anomaly": True}),
    # The same models written with PyTorch: vizgrad draws PyTorch's own graph.
    Example("torch_mlp_digits", "PyTorch: the same MLP on the digits (step 5 of 5)", step=5,
            twin="mlp_digits"),
    Example("torch_cnn", "PyTorch: the same small CNN, modules drawn as boxes",
            {"cluster": True}, twin="cnn"),
    Example("torch_lstm", "PyTorch: the same LSTM (one fused op in PyTorch)",
            {"cluster": True}, twin="lstm"),
    Example("torch_debug_nan", "PyTorch: the same NaN from log(0), named by vizgrad's "
            "anomaly mode (--anomaly)", {"anomaly": True}, twin="debug_nan"),
    Example("torch_debug_vanishing", "PyTorch: the same vanishing gradients, coloured by "
            "--show-grad on PyTorch's backward", {"show_grad": True}, twin="debug_vanishing"),
    Example("torch_debug_rnn_detach", "PyTorch: the same RNN state never detached "
            "(GraphMonitor)", {"target": "loss"}, twin="debug_rnn_detach"),
    Example("torch_debug_total_loss", "PyTorch: a running total_loss += loss keeps every "
            "step's graph (GraphMonitor)", {"target": "total_loss"}),
    # Static graphs (vizgrad.static): drawn before anything runs.
    Example("static_mlp", "Static graph: an MLP's traced forward (vizgrad.static.trace)",
            {"static_graph": "forward"}),
    Example("static_mlp_step", "Static graph: the compiled training step (backward, SGD, "
            "inplace)", {"static_graph": "step"}, source="static_mlp"),
    Example("static_mlp_parallel", "Static graph: the step on two data-parallel replicas",
            {"static_graph": "parallel"}, source="static_mlp"),
]


@dataclass
class Entry:
    """How one example went."""

    example: Example
    ok: bool
    seconds: float
    message: str
    picture: Path | None = None
    viewer: Path | None = None  # the interactive page (<name>.html)

    @property
    def name(self) -> str:
        return self.example.name


@dataclass
class GalleryReport:
    entries: list[Entry]
    index: Path


def find_gallery() -> Path | None:
    """The ``gallery/`` folder of a source checkout (beside the vizgrad package, or in cwd)."""
    for folder in (Path(vizgrad.__file__).resolve().parent.parent / "gallery",
                   Path.cwd() / "gallery"):
        if all((folder / example.script).is_file() for example in EXAMPLES[:1]):
            return folder
    return None


def default_out_dir(gallery: Path) -> Path:
    """``gallery/out`` (ignored by git) in a source checkout."""
    return gallery / "out"


def render_example(example: Example, folder: Path, out_dir: Path) -> Entry:
    """Run one example and write ``out_dir/<name>.svg`` and its viewer page
    ``out_dir/<name>.html``; never raises for the script's errors."""
    start = time.perf_counter()
    if example.needs and importlib.util.find_spec(example.needs) is None:
        return Entry(example, False, 0.0, f"needs {example.needs}: pip install "
                                          f"'vizgrad[{example.needs}]'")
    dtype, grad_mode = vizgrad.get_default_dtype(), vizgrad.is_grad_enabled()
    flags = dict(example.options)
    anomaly = flags.pop("anomaly", False)
    target = flags.pop("target", None)  # the script's variable to draw (--target)
    try:
        mode = vizgrad.detect_anomaly(check_forward=True) if anomaly \
            else contextlib.nullcontext()
        with mode, contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            if anomaly:  # the example makes a NaN on purpose: NumPy's warning is noise here
                warnings.simplefilter("ignore", RuntimeWarning)
            # as `vizgrad render` runs it: stopped when a second backward() starts
            # (with --target run to its end)
            run = run_script(folder / example.script, list(example.args), step=example.step,
                             watch_grads=bool(flags.get("show_grad")),
                             stop_at_second=target is None)
        if run.failed and anomaly and getattr(run.error, "node", None) is not None:
            result = render_error(run.error, run.last_backward, out_dir / f"{example.name}.svg")
            viewer = render_error(run.error, run.last_backward,
                                  out_dir / f"{example.name}.html").path
            first = str(run.error).splitlines()[0]
            return Entry(example, True, time.perf_counter() - start,
                         f"{result.nodes} nodes, {result.edges} edges; found: {first}",
                         result.path, viewer)
        if run.failed:
            return Entry(example, False, time.perf_counter() - start,
                         "the script raised:\n" + format_traceback(run.error))
        if "static_graph" in flags:
            result = render_static(run.namespace, flags["static_graph"],
                                   out_dir / f"{example.name}.svg")
            viewer = render_static(run.namespace, flags["static_graph"],
                                   out_dir / f"{example.name}.html").path
            return Entry(example, True, time.perf_counter() - start,
                         f"{result.nodes} nodes, {result.edges} edges", result.path, viewer)
        choice = select_roots(run, target=target)
        options = render_options(**flags)
        params = script_parameters(run.namespace)
        if params:
            options["params"] = params
        result = render_roots(choice.roots, out_dir / f"{example.name}.svg", options)
        viewer = render_roots(choice.roots, out_dir / f"{example.name}.html", options).path
    except Exception as error:  # noqa: BLE001 - one broken example must not stop the gallery
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        return Entry(example, False, time.perf_counter() - start, detail)
    finally:
        vizgrad.set_default_dtype(dtype)
        vizgrad.set_grad_enabled(grad_mode)
    return Entry(example, True, time.perf_counter() - start,
                 f"{result.graph_nodes} graph nodes, {result.graph_edges} edges (drawn as "
                 f"{result.nodes} boxes, {result.edges} arrows)", result.path, viewer)


def build_gallery(folder: Path, out_dir: Path, only: tuple[str, ...] | list[str] = (),
                  step: Callable[[str], None] | None = None) -> GalleryReport:
    """Render every example (or those named in ``only``) and write ``out_dir/index.html``."""
    step = step or (lambda description: None)
    wanted = [e for e in EXAMPLES if not only or e.name in only or e.script in only]
    unknown = set(only) - {e.name for e in EXAMPLES} - {e.script for e in EXAMPLES}
    if unknown:
        names = ", ".join(e.name for e in EXAMPLES)
        raise ValueError(f"no gallery example called {', '.join(sorted(unknown))}; "
                         f"the examples are: {names}")
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for number, example in enumerate(wanted, 1):
        step(f"[{number}/{len(wanted)}] {example.script}")
        entries.append(render_example(example, folder, out_dir))
    step("writing index.html")
    index = out_dir / "index.html"
    shown = os.path.relpath(out_dir)
    vizgrad.render.write_atomic(index, index_html(
        entries, folder, str(out_dir) if shown.startswith("..") else shown))
    return GalleryReport(entries, index)


def _description(source: str) -> str:
    try:
        return ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError:
        return ""


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; background: #fafafa; color: #222; }
section { background: #fff; border: 1px solid #ddd; border-radius: 8px; margin: 1.5rem 0;
          padding: 1rem 1.5rem; }
.pair { display: flex; gap: 1.5rem; align-items: flex-start; }
.picture { flex: 1 1 50%; text-align: center; overflow: auto; max-height: 80vh; }
.picture img { max-width: 100%; }
pre { flex: 1 1 50%; background: #f4f4f4; padding: .8rem; overflow: auto; font-size: 85%;
      max-height: 80vh; margin: 0; }
code.command { background: #eef; padding: .2rem .4rem; }
.failed { color: #b00; white-space: pre-wrap; }
nav a { margin-right: .8rem; }
.twins { display: flex; gap: 1rem; }
.twins figure { flex: 1 1 50%; margin: 0; }
"""


def index_html(entries: list[Entry], folder: Path, out_dir: str = "gallery/out") -> str:
    """The gallery page: each picture beside its (escaped) source and its command."""
    escape = html.escape
    nav = " ".join(f'<a href="#{escape(e.name)}">{escape(e.name)}</a>' for e in entries)
    sections = []
    by_name = {entry.name: entry for entry in entries}

    def image(entry: Entry) -> str:
        target = entry.viewer or entry.picture  # the picture opens in the viewer when there is one
        return (f'<a href="{escape(target.name)}"><img src="'
                f'{escape(entry.picture.name)}" alt="{escape(entry.example.title)}"></a>')

    for entry in entries:
        source = (folder / entry.example.script).read_text(encoding="utf-8")
        description = _description(source).split("\n\n")[0]
        if entry.ok and entry.picture is not None:
            picture = image(entry)
            twin = by_name.get(entry.example.twin)
            if twin is not None and twin.ok and twin.picture is not None:
                # side by side: the vizgrad example and its PyTorch twin
                picture = (f'<div class="twins"><figure>{image(twin)}<figcaption>vizgrad '
                           f'({escape(twin.example.script)})</figcaption></figure><figure>'
                           f"{picture}<figcaption>PyTorch ({escape(entry.example.script)})"
                           "</figcaption></figure></div>")
            if entry.viewer is not None:
                picture = (f'<p><a class="viewer" href="{escape(entry.viewer.name)}">Open in '
                           "the interactive viewer</a> (search, details, fold levels, "
                           "paths)</p>" + picture)
        else:
            picture = f'<div class="failed">{escape(entry.message)}</div>'
        sections.append(
            f'<section id="{escape(entry.name)}">\n'
            f"<h2>{escape(entry.example.title)}</h2>\n"
            f"<p>{escape(description)}</p>\n"
            f'<p><code class="command">{escape(entry.example.command(out_dir))}</code> '
            f"({escape(entry.message) if entry.ok else 'failed'})</p>\n"
            f'<div class="pair">\n<div class="picture">{picture}</div>\n'
            f"<pre><code>{escape(source)}</code></pre>\n</div>\n</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>vizgrad gallery</title>\n"
            f"<style>{_STYLE}</style>\n</head>\n<body>\n<h1>vizgrad gallery</h1>\n"
            "<p>Each picture is the backward graph of the script beside it, drawn by the "
            "command above it; click it to open the graph in the interactive viewer.</p>\n"
            f"<nav>{nav}</nav>\n" + "\n".join(sections) + "\n</body>\n</html>\n")
