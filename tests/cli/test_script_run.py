"""The library behind the CLI: running a script, watching, choosing the graph, tracebacks."""

from __future__ import annotations

import json
import os
import sys

import pytest

import vizgrad
from vizgrad.debug.script_run import (
    NotAPythonScriptError,
    ScriptNotFoundError,
    StopScript,
    run_script,
)
from vizgrad.debug.selection import (
    NothingToRenderError,
    candidates,
    node_count,
    script_parameters,
    select_roots,
)
from vizgrad.debug.tracebacks import format_traceback

from .conftest import GROWING, SIMPLE


def test_on_backward_sees_every_call_and_can_be_removed() -> None:
    x = vizgrad.ones(3, requires_grad=True)
    seen = []
    with vizgrad.on_backward(lambda outputs: seen.append(list(outputs))):
        loss = (x * 2).sum()
        loss.backward()
        vizgrad.autograd.backward([(x * 3).sum()])
    (x * 4).sum().backward()
    assert len(seen) == 2 and seen[0][0] is loss


def test_on_backward_done_sees_finished_calls_only() -> None:
    x = vizgrad.ones(3, requires_grad=True)
    done = []
    with vizgrad.watching.on_backward_done(lambda outputs: done.append(
            (list(outputs), None if x.grad is None else x.grad.tolist()))):
        loss = (x * 2).sum()
        loss.backward()
        with pytest.raises(RuntimeError):
            (x * 3).backward()  # not a scalar and no gradient given: raises, not "done"
        vizgrad.autograd.backward([(x * 3).sum()])
    (x * 4).sum().backward()
    assert len(done) == 2
    assert done[0][0][0] is loss and done[0][1] == [2.0, 2.0, 2.0]  # .grad already set
    assert done[1][1] == [5.0, 5.0, 5.0]
    with pytest.raises(TypeError, match="on_backward_done\\(\\) needs a callable"):
        vizgrad.watching.on_backward_done(None)


def test_watch_registry() -> None:
    vizgrad.unwatch()
    t = vizgrad.ones(2, requires_grad=True) * 2
    assert vizgrad.watch(t, name="t") is t
    vizgrad.watch(t * 3, name="t")  # same name: replaces
    assert list(vizgrad.watched()) == ["t"] and vizgrad.watched()["t"] is not t
    vizgrad.unwatch("t")
    assert vizgrad.watched() == {}
    with pytest.raises(TypeError, match="needs a Tensor"):
        vizgrad.watch([1, 2])


def test_runs_like_python(script, tmp_path) -> None:
    report = tmp_path / "seen.json"
    path = script("probe.py", f"""
        import json, os, sys
        import helper                     # the script's folder is on sys.path
        json.dump({{"name": __name__, "argv": sys.argv, "cwd": os.getcwd(),
                   "path0": sys.path[0], "main": sys.modules["__main__"].__dict__ is globals(),
                   "file": __file__}}, open({str(report)!r}, "w"))
    """)
    script("helper.py", "VALUE = 1\n")
    before = (list(sys.argv), list(sys.path), sys.modules["__main__"])
    run = run_script(path, ["--lr", "0.1"])
    assert not run.failed
    seen = json.loads(report.read_text())
    assert seen["name"] == "__main__" and seen["main"]
    assert seen["argv"] == [str(path), "--lr", "0.1"]
    assert seen["path0"] == str(path.parent) and seen["file"] == str(path)
    assert seen["cwd"] == os.getcwd()
    assert (list(sys.argv), list(sys.path), sys.modules["__main__"]) == before
    sys.modules.pop("helper", None)


def test_first_backward_and_namespace(script) -> None:
    run = run_script(script("simple.py", SIMPLE))
    assert run.backward_calls == 1 and run.first_backward[0] is run.namespace["loss"]
    choice = select_roots(run)
    assert choice.how == "first backward call" and list(choice.roots) == ["loss"]


def test_step_stops_after_that_backward_and_restores_backward(script, capsys) -> None:
    original = vizgrad.Tensor.backward
    run = run_script(script("grow.py", GROWING), ["-1"], step=3)  # would loop forever
    assert run.stopped_early and run.backward_calls == 3 and not run.failed
    assert "done step 3" not in capsys.readouterr().out  # stopped right after backward 3
    assert vizgrad.Tensor.backward is original and vizgrad.autograd.backward is not None
    roots = select_roots(run).roots
    assert node_count(next(iter(roots.values()))) == 3 * 2 + 2  # 3 x (Exp, Mul), Sum, leaf
    assert next(iter(roots.values())).grad_fn is not None


def test_step_stops_backward_called_through_the_engine_without_patching(script, capsys
                                                                        ) -> None:
    # Listeners, not a patched Tensor.backward: every path into the engine's backward
    # (here the module-level function, imported before the run) stops right after it.
    path = script("engine_path.py", """
        import vizgrad
        from vizgrad.core.engine import backward
        w = vizgrad.ones(2, requires_grad=True)
        inside = vizgrad.Tensor.__dict__["backward"]
        for i in range(100):
            backward([(w * i).sum()])
            print("done step", i + 1)
    """)
    original = vizgrad.Tensor.__dict__["backward"]
    run = run_script(path, step=2)
    assert run.stopped_early and run.backward_calls == 2 and not run.failed
    assert "done step 1" in capsys.readouterr().out.splitlines()[-1]  # not "done step 2"
    assert run.namespace["inside"] is original and vizgrad.Tensor.__dict__["backward"] is original
    assert run.namespace["w"].grad.tolist() == [1.0, 1.0]  # steps 1 and 2 ran: 0 + 1


def test_step_is_not_swallowed_by_except_exception(script) -> None:
    path = script("stubborn.py", """
        import vizgrad
        w = vizgrad.ones(2, requires_grad=True)
        for i in range(100):
            try:
                (w * i).sum().backward()
            except Exception:
                pass
    """)
    run = run_script(path, step=2)
    assert run.stopped_early and run.backward_calls == 2
    assert issubclass(StopScript, BaseException) and not issubclass(StopScript, Exception)


def test_selection_order(script) -> None:
    path = script("order.py", """
        import vizgrad
        a = vizgrad.ones(2, requires_grad=True)
        first = (a * 2).sum()
        first.backward()
        second = (a.exp() * 3).sum()
        vizgrad.watch(second, name="watched")
        class Box: pass
        box = Box()
        box.value = (a + 1).sum()
    """)
    run = run_script(path)
    assert select_roots(run).how == "vizgrad.watch()"
    assert select_roots(run, target="box.value").roots["box.value"] is run.namespace["box"].value
    run.watched.clear()
    assert select_roots(run).roots == {"first": run.namespace["first"]}


def test_global_loss_and_nothing_found(script) -> None:
    run = run_script(script("noback.py", """
        import vizgrad
        a = vizgrad.ones(2, requires_grad=True)
        loss = (a * 2).sum()
    """))
    assert select_roots(run).how == "global 'loss'"
    run = run_script(script("one.py", """
        import vizgrad
        a = vizgrad.ones(2, 3, requires_grad=True)
        b = (a * 2).exp()
    """))
    # issue 12 point 15: the only tensor with a graph is drawn, saying which
    choice = select_roots(run)
    assert list(choice.roots) == ["b"] and choice.roots["b"] is run.namespace["b"]
    assert choice.how == "the only tensor with a graph, 'b' (target='b')"
    run = run_script(script("two.py", """
        import vizgrad
        a = vizgrad.ones(2, 3, requires_grad=True)
        b = (a * 2).exp()
        c = a.sum()
    """))
    with pytest.raises(NothingToRenderError, match="2 tensors with a graph") as caught:
        select_roots(run)
    # a library speaks its Python API, not the CLI's flags (the CLI translates)
    with pytest.raises(NothingToRenderError) as wrong:
        select_roots(run, target="model.los")
    assert str(wrong.value).startswith("target='model.los': the script left no 'model.los'")
    assert "--" not in str(wrong.value) and "no target," in str(caught.value)
    assert select_roots(run, target="b").how == "target='b'"
    names = [(c.name, c.shape, c.node_count) for c in caught.value.candidates]
    assert names[0] == ("b", (2, 3), 3) and ("a", (2, 3), 0) in names


def test_target_errors(script) -> None:
    run = run_script(script("simple.py", SIMPLE))
    with pytest.raises(NothingToRenderError, match="left no 'missing'"):
        select_roots(run, target="missing")
    with pytest.raises(NothingToRenderError, match="not a tensor"):
        select_roots(run, target="vizgrad")
    assert list(select_roots(run, target="loss").roots) == ["loss"]


def test_at_error_uses_the_frames_of_the_failure(script) -> None:
    run = run_script(script("broken.py", """
        import vizgrad
        w = vizgrad.randn(3, 2, requires_grad=True)
        def layer(x):
            hidden = (x * 2).exp()
            return hidden @ w            # (4, 4) @ (3, 2): shape error inside vizgrad
        layer(vizgrad.randn(4, 4, requires_grad=True))
    """))
    assert run.failed and run.exit_code == 1
    # issue 12 point 13: the op that raised, fed by its inputs named as in the user's code
    choice = select_roots(run, at_error=True)
    assert list(choice.roots) == ["hidden", "w"]
    assert choice.roots["w"] is run.namespace["w"]
    assert choice.failure["op"] == "Mm" and choice.failure["error"] == "ShapeError"
    assert choice.failure["message"] == "mat1 and mat2 shapes cannot be multiplied (4x4 and 3x2)"
    assert choice.failure["line"] == "broken.py:6  return hidden @ w            # (4, 4) @ " \
        "(3, 2): shape error inside vizgrad"
    with pytest.raises(NothingToRenderError):
        select_roots(run)
    # an error that no op raised: the biggest graph the failing frames held
    run = run_script(script("own.py", """
        import vizgrad
        def layer(x):
            hidden = (x * 2).exp()
            raise RuntimeError("my own check failed")
        layer(vizgrad.randn(4, 4, requires_grad=True))
    """))
    choice = select_roots(run, at_error=True)
    assert list(choice.roots) == ["layer:hidden"] and choice.failure is None


def test_traceback_shows_user_frames_not_vizgrads(script) -> None:
    run = run_script(script("broken.py", """
        import vizgrad
        def inner():
            return vizgrad.ones(2, 2) @ vizgrad.ones(3, 3)
        try:
            inner()
        except ValueError as error:
            raise RuntimeError("wrapped") from error
    """))
    text = format_traceback(run.error)
    assert "broken.py\", line 4, in inner" in text and "RuntimeError: wrapped" in text
    assert "direct cause" in text and "inside vizgrad hidden" in text
    assert "script_run.py" not in text and "runpy" not in text and "/vizgrad/ops" not in text
    assert text.index("ShapeError") < text.index("RuntimeError")


def test_system_exit(script) -> None:
    assert not run_script(script("ok.py", "import sys\nsys.exit(0)\n")).failed
    run = run_script(script("bad.py", "import sys\nsys.exit(3)\n"))
    assert run.failed and run.exit_code == 3 and format_traceback(run.error) == "SystemExit: 3"


def test_not_found_and_not_python(tmp_path) -> None:
    with pytest.raises(ScriptNotFoundError):
        run_script(tmp_path / "missing.py")
    with pytest.raises(ScriptNotFoundError):
        run_script(tmp_path)
    binary = tmp_path / "data.py"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    with pytest.raises(NotAPythonScriptError, match="not a Python script"):
        run_script(binary)
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4}')
    with pytest.raises(NotAPythonScriptError, match="nbconvert"):
        run_script(notebook)
    broken = tmp_path / "syntax.py"
    broken.write_text("def f(:\n")
    with pytest.raises(NotAPythonScriptError, match="line 1"):
        run_script(broken)


def test_candidates_and_parameters(script) -> None:
    run = run_script(script("model.py", """
        import vizgrad
        import vizgrad.nn as nn
        model = nn.Linear(3, 2)
        losses = [model(vizgrad.ones(1, 3)).sum() for _ in range(2)]
    """))
    names = [c.name for c in candidates(run)]
    assert "losses[0]" in names and "model.weight" in names
    params = script_parameters(run.namespace)
    assert params["model.weight"] is run.namespace["model"].weight
    assert list(select_roots(run, target="losses").roots) == ["losses[0]", "losses[1]"]


def test_node_stacks_end_at_the_script(script, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = script("stacked.py", """
        import vizgrad
        def model(x):
            return (x * 2).sum()
        loss = model(vizgrad.ones(3, requires_grad=True))
    """)
    run = run_script("stacked.py")
    frames = run.namespace["loss"].grad_fn.next_functions[0][0].stack
    assert [(f.function, f.lineno) for f in frames] == [("<module>", 5), ("model", 4)]
    assert {f.filename for f in frames} == {str(path)}  # absolute, as python makes it


def test_a_script_that_changes_folder(script, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = os.getcwd()
    run = run_script(script("mover.py", f"import os\nos.chdir({str(elsewhere)!r})\n"))
    assert not run.failed and os.getcwd() == before
