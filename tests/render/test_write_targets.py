"""Issue 26, point 6: every atomic writer, given an existing folder as its target, says
so about the user's path and leaves nothing behind (no temporary file)."""

from __future__ import annotations

import os

import pytest

import vizgrad
from vizgrad import _atomic, static
from vizgrad.render import write_atomic


def _graph():
    return vizgrad.randn(3, requires_grad=True).exp().sum()


def _workspace_checkpoint(path):
    ws = static.Workspace()
    ws["w"] = vizgrad.ones(2).numpy()
    ws.checkpoint(path)


WRITERS = {
    "write_atomic": lambda path: write_atomic(path, "text"),
    "render.save dot": lambda path: vizgrad.render.save(_graph(), path),
    "render.save json": lambda path: vizgrad.render.save(_graph(), path),
    "vizgrad.save": lambda path: vizgrad.save({"w": vizgrad.ones(2)}, path),
    "Workspace.checkpoint": _workspace_checkpoint,
}
NAMES = {"write_atomic": "out.txt", "render.save dot": "graph.dot",
         "render.save json": "graph.json", "vizgrad.save": "ckpt.npz",
         "Workspace.checkpoint": "ws.npz"}


@pytest.mark.parametrize("late", [False, True], ids=["folder", "folder-made-meanwhile"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_folder_target_is_named_and_nothing_is_left_behind(tmp_path, monkeypatch,
                                                              writer, late):
    target = tmp_path / NAMES[writer]
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    if late:  # the folder appears between the check and the rename: same error
        monkeypatch.setattr(_atomic, "check_target", lambda path: None)
    with pytest.raises(IsADirectoryError) as caught:
        WRITERS[writer](target)
    message = str(caught.value)
    assert f"cannot write {target}: it is a folder" in message
    assert ".tmp" not in message
    assert sorted(os.listdir(tmp_path)) == [target.name]  # no temporary file
    assert os.listdir(target) == ["keep.txt"]
    assert (target / "keep.txt").read_text() == "mine"


def test_a_missing_folder_is_said_about_the_target(tmp_path):
    for write in (lambda p: write_atomic(p, "x"), lambda p: vizgrad.save({"a": 1}, p)):
        target = tmp_path / "absent" / "file.npz"
        with pytest.raises(FileNotFoundError, match=f"cannot write {target}") as caught:
            write(target)
        assert ".tmp" not in str(caught.value)


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_link_to_a_folder_is_replaced_as_a_link_is(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link.txt")
    write_atomic(tmp_path / "link.txt", "text")  # os.replace swaps the link itself
    assert (tmp_path / "link.txt").read_text() == "text"
    assert os.listdir(tmp_path / "real") == []
