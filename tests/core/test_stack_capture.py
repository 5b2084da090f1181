"""Audit of issue 2 "Forward stack capture": depth semantics, filtering, and callers.

The user's frames only (vizgrad's own filtered), innermost last, at most 8 by default,
``capture_stack(depth=N)`` as a global setting; and the callers recorded are the real
ones even when Python reuses a freed frame's memory for the next call.
"""

from __future__ import annotations

import inspect
import os
import sys

import numpy as np

import vizgrad as vg
from vizgrad import nn

PACKAGE_DIR = os.path.dirname(os.path.abspath(vg.__file__)) + os.sep


def leaf():
    return vg.tensor(np.ones(2), requires_grad=True)


def _deep(x, n):
    if n == 0:
        return x * 3.0  # the op
    return _deep(x, n - 1)


def _inner(x):
    return x * 2.0


def _helper(x):
    return _inner(x)


def _via_f(x):
    return _helper(x)


def _via_g(x):
    return _helper(x)


def test_default_depth_is_eight_user_frames_innermost_last():
    node = _deep(leaf(), 12).grad_fn
    frames = node.stack
    assert len(frames) == 8
    assert [f.function for f in frames] == ["_deep"] * 8
    lines, first = inspect.getsourcelines(_deep)
    op_line = first + next(i for i, text in enumerate(lines) if "# the op" in text)
    assert frames[-1].lineno == op_line and frames[-1].line == "return x * 3.0  # the op"
    assert frames[-1].filename == __file__


def test_global_depth_setting_and_zero():
    x = leaf()
    vg.capture_stack(depth=3)  # a plain call is a global setting (the fixture resets it)
    assert len(_deep(x, 12).grad_fn.stack) == 3
    assert len(_deep(x, 12).grad_fn.stack) == 3
    vg.capture_stack(depth=1)
    (frame,) = _deep(x, 12).grad_fn.stack
    assert frame.function == "_deep" and "x * 3.0" in frame.line
    vg.capture_stack(depth=0)
    assert _deep(x, 12).grad_fn.stack == ()
    vg.capture_stack(True)
    assert len(_deep(x, 12).grad_fn.stack) == 8


def test_vizgrad_frames_are_filtered_from_module_calls():
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    out = model(vg.ones(1, 2))
    frames = out.grad_fn.stack
    assert frames and frames[-1].function == "test_vizgrad_frames_are_filtered_from_module_calls"
    assert not any(f.filename.startswith(PACKAGE_DIR) for f in frames)


def test_callers_are_right_when_frames_are_reused():
    # _inner's and _helper's frames are freed after each call and the next call usually
    # gets the same memory (so the same id()): the stack must still name the real caller.
    x = leaf()
    nodes = []
    for _ in range(4):
        nodes.append((_via_f(x).grad_fn, _via_g(x).grad_fn))
    test = "test_callers_are_right_when_frames_are_reused"
    for from_f, from_g in nodes:
        assert [f.function for f in from_f.stack[-4:]] == [test, "_via_f", "_helper", "_inner"]
        assert [f.function for f in from_g.stack[-4:]] == [test, "_via_g", "_helper", "_inner"]


def test_ops_in_one_loop_share_callers_but_keep_their_own_line():
    x = leaf()
    nodes = []
    for _ in range(3):
        nodes.append((x * 1.0).grad_fn)
        nodes.append((x + 1.0).grad_fn)
    lines = [n.stack[-1].lineno for n in nodes]
    assert lines[0] == lines[2] == lines[4] and lines[1] == lines[3] == lines[5]
    assert lines[1] == lines[0] + 1
    assert all(n.stack[:-1] == nodes[0].stack[:-1] for n in nodes)


def _ops_from_a_generator(x):
    while True:
        yield (x * 2.0).grad_fn


def _resume_here(gen):
    return next(gen)


def _resume_there(gen):
    return next(gen)


def test_a_generator_resumed_by_different_callers_records_each_caller():
    # The generator's frame stays the same while its callers change between resumptions:
    # the cached callers must follow the chain, not the frame.
    gen = _ops_from_a_generator(leaf())
    here, there, here_again = _resume_here(gen), _resume_there(gen), _resume_here(gen)
    assert [f.function for f in here.stack[-2:]] == ["_resume_here", "_ops_from_a_generator"]
    assert [f.function for f in there.stack[-2:]] == ["_resume_there", "_ops_from_a_generator"]
    assert here_again.stack == here.stack


def _op_helper_op(x):
    first = (x * 2.0).grad_fn
    middle = _inner(x).grad_fn  # a walk of its own, from a deeper frame
    last = (x * 2.0).grad_fn  # back here: this frame's callers again
    return first, middle, last


def test_ops_of_one_frame_around_a_deeper_call_keep_their_callers():
    # The callers' part is reused while the op comes from the frame the last walk
    # started from (its tag); a deeper call in between walks again, and coming back
    # must give this frame's callers, not the deeper call's.
    test = "test_ops_of_one_frame_around_a_deeper_call_keep_their_callers"
    for _ in range(3):
        first, middle, last = _op_helper_op(leaf())
        assert [f.function for f in first.stack[-2:]] == [test, "_op_helper_op"]
        assert [f.function for f in middle.stack[-3:]] == [test, "_op_helper_op", "_inner"]
        assert [f.function for f in last.stack[-2:]] == [test, "_op_helper_op"]
        assert first.stack[:-1] == last.stack[:-1]


def test_a_tracers_frame_function_is_left_alone():
    # Frames are tagged through f_trace only where nobody else uses it: a debugger's
    # local trace function stays, and under an active tracer nothing is tagged.
    events = []

    def local(frame, event, arg):
        events.append(event)
        return local

    def with_local():
        frame = sys._getframe()
        frame.f_trace = local  # as a debugger sets it
        nodes = []
        for _ in range(3):  # (a loop: a comprehension has a frame of its own)
            nodes.append((leaf() * 2.0).grad_fn)
        assert frame.f_trace is local
        return nodes

    def untraced():
        nodes = []
        for _ in range(3):
            nodes.append((leaf() * 2.0).grad_fn)
        return nodes, sys._getframe().f_trace

    for node in with_local():
        assert node.stack[-1].function == "with_local"
    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: None)  # a tracer that follows no frame
    try:
        nodes, f_trace = untraced()
    finally:
        sys.settrace(previous)
    assert f_trace is None
    assert [n.stack[-1].function for n in nodes] == ["untraced"] * 3
    assert nodes[0].stack[:-1] == nodes[2].stack[:-1]
