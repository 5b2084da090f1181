"""Graphviz's "N out of M exterior labels positioned" note stays out of a library user's
stderr (issue 28): a big picture sets ``forcelabels=false``, and ``dot`` says so at every
layout of ``make_dot(...).pipe()`` / ``.render()`` (a notebook showed it under every
picture).  Every other line of ``dot``'s stderr still passes, and its errors still raise."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import graphviz
import pytest

import vizgrad as vg
from vizgrad.render import digraph, dot_binary

pytestmark = pytest.mark.skipif(dot_binary() is None, reason="Graphviz dot is not installed")

NOTE = "exterior labels positioned"


def _fan(branches: int = 130) -> vg.Tensor:
    """One tensor used by ``branches`` products summed in a chain: over 500 boxes, whose
    arrow texts (5-d shapes) crowd round the shared input, so dot leaves some out."""
    x = vg.ones(2, 3, 4, 5, 6, requires_grad=True)  # values do not matter: the layout
    total = None
    for _ in range(branches):
        term = (x * vg.ones(2, 3, 4, 5, 6, requires_grad=True)).tanh()
        total = term if total is None else total + term
    assert total is not None
    return total.sum()


@pytest.fixture(scope="module")
def big() -> graphviz.Digraph:
    picture = vg.make_dot(_fan(), max_nodes=None)
    assert "forcelabels=false" in picture.source
    # not vacuous: Graphviz itself writes the note for this very DOT
    bare = subprocess.run([dot_binary(), "-Tsvg"], input=picture.source.encode(),
                          capture_output=True, check=True)
    assert NOTE in bare.stderr.decode()
    return picture


def test_pipe_leaves_the_note_out(big: graphviz.Digraph, capfd: pytest.CaptureFixture) -> None:
    assert isinstance(big, graphviz.Digraph)  # what notebooks and pytorchviz users expect
    svg = big.pipe(format="svg")
    assert svg.startswith(b"<?xml")
    assert NOTE not in capfd.readouterr().err


def test_render_and_the_notebook_display_leave_it_out(
        big: graphviz.Digraph, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    written = Path(big.render(tmp_path / "big", format="svg", cleanup=True))
    assert written.read_bytes().startswith(b"<?xml")
    assert "image/svg+xml" in big._repr_mimebundle_()
    assert NOTE not in capfd.readouterr().err
    assert sys.stderr is sys.__stderr__ or not isinstance(sys.stderr, digraph._WithoutLeftOutNote)


def test_other_graphviz_warnings_still_show(big: graphviz.Digraph,
                                            capfd: pytest.CaptureFixture) -> None:
    odd = big.copy()
    assert type(odd) is type(big)
    odd.node("stray", color="nosuchcolour")  # dot warns about the colour, and draws
    odd.pipe(format="svg")
    err = capfd.readouterr().err
    assert "nosuchcolour" in err and NOTE not in err


def test_a_graphviz_error_still_raises(capfd: pytest.CaptureFixture) -> None:
    broken = vg.make_dot((vg.randn(3, requires_grad=True) * 2).sum())
    broken.body.append("\tthis is not { DOT\n")
    with pytest.raises(graphviz.CalledProcessError) as raised:
        broken.pipe(format="svg")
    assert "syntax error" in str(raised.value)
    assert "syntax error" in capfd.readouterr().err  # as graphviz shows it, unchanged


def test_the_filter_keeps_every_other_line() -> None:
    written: list[str] = []

    class Stream:
        encoding = "utf-8"

        def write(self, text: str) -> int:
            written.append(text)
            return len(text)

    stand_in = digraph._WithoutLeftOutNote(Stream())
    stand_in.write("Warning: 3 out of 9 exterior labels positioned.\n")
    stand_in.write("Warning: a is not a known color.\n"
                   "Warning: 998 out of 1002 exterior labels positioned.\nError: bad\n")
    assert written == ["Warning: a is not a known color.\nError: bad\n"]
    assert stand_in.encoding == "utf-8"


def test_stderr_is_put_back_also_when_threads_render_at_once(big: graphviz.Digraph) -> None:
    before = sys.stderr
    threads = [threading.Thread(target=big.pipe, kwargs={"format": "svg"}) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sys.stderr is before
