"""The depth GraphMonitor records (``graph_size``, ``topology().depth``) is the longest
chain of nodes of a PyTorch graph, whatever order the walk found the nodes in.

A PyTorch graph with leaves was relaxed in the walk's order, which is not a
topological one: a node reached first through a short path passed its level on before
a longer path reached it, and the tiny GPT-2's depth read 67 where its longest chain
has 103 nodes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.torch.real_models import NAMES, build  # noqa: E402
from vizgrad import graph  # noqa: E402
from vizgrad.graph.topology import longest_chain  # noqa: E402


def _fixpoint_depth(loss) -> int:
    """The longest chain by relaxing every edge until nothing changes (slow, plain)."""
    shape = graph.topology(loss)
    level = [1] * len(shape.raws)
    changed = True
    while changed:
        changed = False
        for position, children in enumerate(shape.children):
            for child in children:
                if level[position] + 1 > level[child]:
                    level[child] = level[position] + 1
                    changed = True
    return max(level)


def test_a_node_found_first_through_a_short_path() -> None:
    x = torch.randn(3, requires_grad=True)
    a = x.exp()
    # the walk reaches a's ExpBackward0 from the add first (the last input first),
    # before the longer way through tanh, cos and sin
    loss = (a.sin().cos().tanh() + a).sum()
    # Sum, Add, Tanh, Cos, Sin, Exp, x's AccumulateGrad
    assert graph.graph_size(loss).depth == graph.topology(loss).depth == 7
    assert graph.graph_size(loss, saved=False).depth == 7


@pytest.mark.parametrize("name", NAMES)
def test_the_depth_of_every_corpus_model_is_its_longest_chain(name) -> None:
    loss = build(name).loss()
    expected = _fixpoint_depth(loss)
    assert graph.graph_size(loss).depth == graph.topology(loss).depth == expected
    if name == "gpt2":
        assert expected == 103


def test_longest_chain_in_any_order_of_the_nodes() -> None:
    # 0 -> 1 -> 2 -> 3 and 0 -> 3, numbered in several orders
    assert longest_chain([[1, 3], [2], [3], []]) == 4
    assert longest_chain([[3, 2], [], [1], [2]]) == 4  # 0 -> 3 -> 2 -> 1, 0 -> 2
    assert longest_chain([[], [0], [1], [2, 0]]) == 4  # every edge points back
    assert longest_chain([]) == 0


def test_nodes_of_another_thread_whose_seq_is_no_order() -> None:
    # Sequence numbers count per thread: a chain made in a fresh thread can carry
    # numbers above (or below) those of the nodes this thread builds on it, so "oldest
    # seq first" is no topological order there; the per-edge check must see it and
    # count the longest chain anyway.
    import threading

    from vizgrad.adapters import torch_size

    x = torch.randn(3, requires_grad=True)
    made: dict[str, torch.Tensor] = {}

    def far_chain() -> None:  # a fresh thread's numbers start at 0: move them on first
        for _ in range(100):
            torch.ones(1, requires_grad=True).exp()
        a = x
        for _ in range(40):
            a = a * 1.5
        made["a"] = a

    def loss_on_it() -> None:  # another fresh thread: numbers below the chain's
        made["loss"] = made["a"].exp().sum() + x.sin().sum()

    for job in (far_chain, loss_on_it):
        worker = threading.Thread(target=job)
        worker.start()
        worker.join()
    loss = made["loss"]
    found = graph.reach([loss.grad_fn], lambda fn: fn.next_functions, pairs=True)
    seqs = {fn: fn._sequence_nr() for fn in found}
    assert any(seqs[child] >= seqs[fn] for fn, nexts in found.items()  # really out of order
               for child, _ in nexts if child is not None and seqs[child] < 1 << 63)
    expected = _fixpoint_depth(loss)
    assert expected == 44  # Add, Sum, Exp, 40 Muls, x's AccumulateGrad
    assert graph.graph_size(loss, saved=False).depth == expected
    assert torch_size._size([loss.grad_fn], saved=False)[1] == expected
    assert graph.topology(loss).depth == expected
