"""Writing pictures: ``save`` picks the format from the suffix (one row per format in
``emitters.EMITTERS``) and writes atomically.

SVG/PNG/PDF run Graphviz's ``dot`` in a subprocess with a time limit; when ``dot``
is missing or too slow the DOT is written beside the target and the error says
what to do.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .. import _atomic as atomic
from .build import build_view
from .static_view import drawn_view, draws_itself
from .svg_labels import labels_on_top
from .view import GraphView, RenderOptions

#: Seconds ``dot`` may spend on a layout before ``save`` gives up.
DEFAULT_LAYOUT_TIMEOUT = 60.0

#: A PNG drawn at natural size (``size=None``) is capped at this many inches a side
#: (9,600 px at Graphviz's 96 dpi): rasterising a 1,000-node graph uncapped takes
#: ~45 s and ~1 GB, and its text would be too small to read anyway.
RASTER_SIZE_CAP = "100,100"

INSTALL_HINT = ("Install Graphviz, which provides it: `apt-get install graphviz` (Debian/Ubuntu), "
                "`brew install graphviz` (macOS), `conda install -c conda-forge graphviz`, "
                "or see https://graphviz.org/download/ ; then make sure `dot` is on PATH.")


class RenderError(RuntimeError):
    """Graphviz failed to render a graph."""


class GraphvizNotFoundError(RenderError):
    """Graphviz's ``dot`` program is not installed (or not on PATH)."""


class LayoutTimeoutError(RenderError):
    """Graphviz took longer than the layout time limit.

    ``timeout`` is the limit in seconds, ``dot_path`` where the DOT was saved (or None).
    """

    def __init__(self, message: str, timeout: float | None = None,
                 dot_path: Path | None = None) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.dot_path = dot_path


#: The longest time limit taken (a week): past it the operating system's timers
#: overflow (an infinite or 1e300 s limit was a traceback after the script had run).
MAX_SECONDS = 7 * 24 * 3600.0


def seconds_problem(value: float) -> str | None:
    """What is wrong with ``value`` as a time limit in seconds, or ``None``: it must be
    a finite number more than 0 and at most :data:`MAX_SECONDS`."""
    if math.isnan(value):
        return "is NaN, not a number of seconds"
    if value <= 0:
        return f"must be more than 0 seconds, got {value:g}"
    if value > MAX_SECONDS:
        return (f"must be at most {MAX_SECONDS:,.0f} seconds (a week), got {value:g}")
    return None


def check_layout_timeout(value: Any) -> float | None:
    """``layout_timeout`` checked up front: ``None`` (no limit) or a number of seconds
    more than 0 and at most :data:`MAX_SECONDS`.

    Example
    -------
    >>> check_layout_timeout("abc")
    Traceback (most recent call last):
    TypeError: layout_timeout must be a number of seconds or None, got 'abc' (str)
    >>> check_layout_timeout(float("inf"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: layout_timeout must be at most 604,800 seconds (a week), got inf; use None ...
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"layout_timeout must be a number of seconds or None, got {value!r} "
                        f"({type(value).__name__})")
    try:
        seconds = float(value)
    except OverflowError:  # an int too big for a float
        seconds = math.inf
    problem = seconds_problem(seconds)
    if problem is not None:
        raise ValueError(f"layout_timeout {problem}; use None for no limit")
    return seconds


def _temporary_copy(path: Path, data: bytes | str) -> str:
    """A complete hidden copy of ``data`` beside ``path`` (a fresh name), mode 0666 - umask."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.",
                                             suffix=".tmp")
    except OSError as error:  # no such folder, no permission: say so about the target
        raise atomic.target_error(path, error) from None
    try:
        # mkstemp makes the file 0600; give it the mode a plain open() would (0666 - umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
    except BaseException:
        os.unlink(temporary)
        raise
    return temporary


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``.

    A failure leaves neither a half-written ``path`` nor the temporary file.
    """
    path = Path(path)
    atomic.check_target(path)
    atomic.replace(_temporary_copy(path, data), path)
    return path


def free_path(path: Path) -> Path:
    """``path`` if no file is there, else the first free ``stem.1.suffix``, ``stem.2.suffix``...

    Used for files the user did not name (the DOT saved beside a failed SVG): an
    unrelated file already there is never overwritten.
    """
    candidate, number = path, 0
    while os.path.lexists(candidate):
        number += 1
        candidate = path.with_name(f"{path.stem}.{number}{path.suffix}")
    return candidate


def write_new(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` atomically to ``path`` or, when a file is already there, to the
    first free name beside it (see :func:`free_path`); return the path written.

    The complete file is hard-linked into place, which fails rather than replace a
    file created meanwhile; where links are not supported the name is claimed with
    an exclusive create first, then replaced by the complete file.
    """
    path = Path(path)
    temporary = _temporary_copy(path, data)
    try:
        for _ in range(1000):
            target = free_path(path)
            try:
                os.link(temporary, target)
                return target
            except FileExistsError:
                continue
            except OSError:  # no hard links here (some network/FAT file systems)
                try:
                    os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                except FileExistsError:
                    continue
                atomic.replace(temporary, target)
                return target
        raise FileExistsError(f"no free file name beside {path}")
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def dot_binary() -> str | None:
    """Path of Graphviz's ``dot``, or ``None`` when it is not installed."""
    return shutil.which("dot")


def run_dot(source: str, fmt: str, timeout: float | None = DEFAULT_LAYOUT_TIMEOUT,
            dot_path: Path | None = None) -> bytes:
    """Lay out and render DOT ``source`` to ``fmt`` bytes with a time limit.

    When ``dot`` is missing or times out and ``dot_path`` is given, the DOT is
    written there first (or beside it under a free name: an existing file is never
    overwritten), so the work is not lost.  ``dot`` is killed if this is
    interrupted (an exception, or a signal turned into one).  An SVG gets its arrows'
    texts drawn above every arrow (``svg_labels.labels_on_top``).
    """
    binary = dot_binary()
    if binary is None:
        where = ""
        if dot_path is not None:
            written = write_new(dot_path, source)
            where = f" The DOT source was written to {_named(written, dot_path)}."
        raise GraphvizNotFoundError(
            f"rendering to {fmt.upper()} needs Graphviz's `dot` program, which was not found "
            f"on PATH.{where} {INSTALL_HINT}")
    try:
        done = subprocess.run([binary, f"-T{fmt}"], input=source.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        where, written = "", None
        if dot_path is not None:
            written = write_new(dot_path, source)
            where = f" The DOT was saved to {_named(written, dot_path)}."
        raise LayoutTimeoutError(
            f"Graphviz did not finish laying out the graph within {timeout:g} s.{where} "
            "Draw less (max_nodes=..., collapse='scope', focus=node, radius=k) or raise "
            "the limit (layout_timeout=... seconds, or None for no limit).",
            timeout, written) from error
    if done.returncode != 0:
        raise RenderError(f"Graphviz `dot -T{fmt}` failed (exit {done.returncode}): "
                          f"{done.stderr.decode('utf-8', 'replace').strip()}")
    if fmt == "svg":
        return labels_on_top(done.stdout.decode("utf-8")).encode("utf-8")
    return done.stdout


def _named(written: Path, wanted: Path) -> str:
    if written == wanted:
        return str(written)
    return f"{written} ({wanted.name} already exists and was left as it was)"


def as_view(view_or_tensor: Any, **options: Any) -> GraphView:
    """A ``GraphView`` as is, or one built from a tensor / sequence / dict of tensors."""
    if isinstance(view_or_tensor, GraphView):
        if options:
            raise TypeError("options apply when building a view; this is already a GraphView")
        return view_or_tensor
    if draws_itself(view_or_tensor):  # a static graph
        return drawn_view(view_or_tensor, **options)
    return build_view(view_or_tensor, RenderOptions.make(**options))


def save(view_or_tensor: Any, path: str | os.PathLike, *,
         layout_timeout: float | None = DEFAULT_LAYOUT_TIMEOUT, **options: Any) -> Path:
    """Write a graph picture; the format comes from the suffix.

    ``.svg`` / ``.png`` / ``.pdf`` (Graphviz), ``.dot`` / ``.gv``, ``.json`` (see
    docs/json_schema.md) or ``.html`` (the interactive viewer: one offline page with
    every fold level laid out, see docs/rendering.md).  ``options`` are
    ``make_dot``'s.  Returns the path written.  ``layout_timeout`` (seconds, or
    None) limits Graphviz's layout for every format; for JSON a layout that times
    out leaves the node positions out (with a note and a warning).

    Example
    -------
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> vizgrad.render.save(loss, "graph.svg", show_attrs=True)
    PosixPath('graph.svg')
    """
    from .emitters import emitter_for

    layout_timeout = check_layout_timeout(layout_timeout)
    path = Path(path)
    emitter = emitter_for(path)  # one row per format: emitters.EMITTERS
    atomic.check_target(path)  # before the layout: a folder there would waste it
    return emitter.write(view_or_tensor, path, layout_timeout, options)
