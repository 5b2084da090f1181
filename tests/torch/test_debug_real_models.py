"""The debugging tools on real PyTorch models (tests/torch/real_models.py): they never
break the user's step, never change a gradient, and their figures are right."""

from __future__ import annotations

import importlib
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import vizgrad  # noqa: E402
from tests.torch.real_models import NAMES, build, run_plain  # noqa: E402
from vizgrad import graph  # noqa: E402
from vizgrad.debug import gradstats  # noqa: E402
from vizgrad.debug.summary import graph_summary  # noqa: E402


def _same_grads(expected: dict, got: dict) -> None:
    assert expected.keys() == got.keys()
    for name, grad in expected.items():
        assert (grad is None) == (got[name] is None), name
        if grad is not None:
            assert torch.equal(grad, got[name]), name


def _saved_by_hooks(case) -> tuple:
    """The case's loss, computed under ``saved_tensors_hooks`` that keep every tensor
    PyTorch saves, and ``(bytes, leaf bytes)`` of their storages (each once)."""
    kept: list = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: (kept.append(t), t)[1],
                                                  lambda t: t):
        loss = case.loss()
    storages: dict = {}
    for tensor in kept:  # classified after forward, when outputs have their grad_fn
        storage = tensor.untyped_storage()
        base = tensor._base
        leaf = tensor.grad_fn is None or (base is not None and base.grad_fn is None)
        if storage.nbytes():
            storages[storage.data_ptr()] = (storage.nbytes(), leaf)
    return loss, (sum(size for size, _ in storages.values()),
                  sum(size for size, leaf in storages.values() if leaf))


@pytest.mark.parametrize("name", NAMES)
def test_watch_grads_takes_every_node_right_and_changes_nothing(name) -> None:
    expected = run_plain(name)
    case = build(name)
    loss = case.loss()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no hook stepped aside
        with vizgrad.debug.watch_grads(loss) as record:
            loss.backward()
    _same_grads(expected, case.grads())
    walk = record.walk
    ops = [node for node in walk.nodes if not node.is_accumulate]
    assert not record.skipped and all(node.seq in record.stats for node in ops)
    assert None not in record.stats  # (PyTorch's leaves have no seq: not all under None)
    # every input lines up with its own gradient (a KV cache's empty first input, a
    # conv's input that needs no gradient shift nothing)
    assert _edges_match_leaf_grads(record) >= 4


def _edges_match_leaf_grads(record) -> int:
    """Check that the gradient recorded on the edge into each parameter used once is
    its ``.grad``; return how many were checked."""
    walk = record.walk
    feeding: dict = {}
    for edge in walk.edges:
        if edge.next_node.is_accumulate:
            feeding.setdefault(edge.next_node, []).append(edge)
    checked = 0
    for leaf, edges in feeding.items():
        if len(edges) != 1 or leaf.variable.grad is None:
            continue
        edge = edges[0]
        flat = edge.node.flat_slots.index((edge.slot, edge.rank))
        recorded = record.stats[edge.node.seq]["edges"][flat]
        norm = float(torch.linalg.vector_norm(leaf.variable.tensor.grad.double()))
        assert recorded["norm"] == pytest.approx(norm, rel=1e-5, abs=1e-12), edge
        checked += 1
    return checked


def test_watch_grads_on_an_lstm_over_raw_features() -> None:
    # the LSTM's input needs no gradient: its (None, 0) input shifted every weight's
    # gradient onto the next weight's shape (ValueError: cannot reshape)
    torch.manual_seed(0)
    lstm, head = torch.nn.LSTM(3, 8, num_layers=2, batch_first=True), torch.nn.Linear(8, 2)
    loss = head(lstm(torch.randn(2, 5, 3))[0]).pow(2).mean()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with vizgrad.debug.watch_grads(loss) as record:
            loss.backward()
    assert not record.skipped and _edges_match_leaf_grads(record) == 8 + 2


def test_a_failing_hook_warns_once_steps_aside_and_changes_nothing(monkeypatch) -> None:
    expected = run_plain("resnet_block")
    case = build("resnet_block")
    loss = case.loss()
    real = gradstats.torch_node_entry  # (the path a PyTorch node's hook takes)
    calls = []

    def broken(grad_outputs, grad_inputs, shapes, stats):
        calls.append(len(grad_inputs))
        if len(grad_inputs) == 3 and shapes[1] is not None and len(shapes[1]) == 4:
            raise ValueError("broken on purpose")  # every convolution (4-d weight)
        return real(grad_outputs, grad_inputs, shapes, stats)

    monkeypatch.setattr(gradstats, "torch_node_entry", broken)
    with pytest.warns(RuntimeWarning, match="ConvolutionBackward0") as caught:
        with vizgrad.debug.watch_grads(loss) as record:
            loss.backward()
    _same_grads(expected, case.grads())
    convolutions = [n for n in record.walk.nodes if n.name() == "ConvolutionBackward0"]
    assert len(convolutions) == 3 and set(record.skipped) == {n.seq for n in convolutions}
    assert len([w for w in caught if issubclass(w.category, RuntimeWarning)]) == 3
    assert all(n.seq not in record.stats for n in convolutions)
    # the tools say what they did not see, and draw the rest
    stats = vizgrad.debug.grad_stats(case.model, record.walk)
    unseen = [line for line in stats.problems if "not watched" in line]
    assert len(unseen) == 3 and all("ConvolutionBackward0" in line for line in unseen)
    view = vizgrad.render.build_view(loss, show_grad=True)
    assert any("gradient of 3 nodes was not watched" in note for note in view.notes)


@pytest.mark.parametrize("name", NAMES)
def test_memory_report_agrees_with_saved_tensors_hooks(name) -> None:
    case = build(name)
    loss, (saved, leaves) = _saved_by_hooks(case)
    report = vizgrad.debug.memory_report(loss)
    assert saved > 0 and leaves > 0
    assert (report.total_bytes, report.leaf_bytes) == (saved, leaves)
    assert report.activation_bytes == saved - leaves
    assert sum(item.bytes for item in report.nodes) == saved
    dot = vizgrad.make_dot(loss, show_memory=True).source
    assert "saved " in dot
    from vizgrad.debug.memory import human_bytes

    notes = vizgrad.render.build_view(loss, show_memory=True).notes
    assert any(f"{human_bytes(saved - leaves)} activations, {human_bytes(leaves)} parameters "
               "and inputs" in note for note in notes)
    summary = graph_summary(loss)["saved"]
    assert (summary["held_leaf_bytes"], summary["held_activation_bytes"]) == (
        leaves, saved - leaves)
    loss.backward()
    after = vizgrad.debug.memory_report(loss)
    assert after.total_bytes == 0 and after.freed > 0
    assert "freed by backward" in str(after)


def test_inspect_reports_freed_pytorch_saves_as_freed_not_as_bytes() -> None:
    case = build("resnet_block")
    loss = case.loss()
    loss.backward()
    saved = graph_summary(loss)["saved"]
    freed = sum(1 for node in graph.walk(loss).nodes for item in node.saved
                if item.freed and item.kind != "scalar")
    assert freed > 0 and saved["freed"] == saved["unknown"] == freed
    assert saved["total_bytes"] == saved["held_bytes"] == 0
    assert all(item["freed"] and item["bytes"] == 0 for item in saved["by_node"])
    names = [leaf["name"] for leaf in graph_summary(loss)["leaves"]]
    assert len(set(names)) == len(names) == len(list(case.model.parameters()))


def test_show_grad_gives_each_edge_its_own_gradient() -> None:
    # Addmm's inputs are (bias, x, weight.t()): each edge into it carries the gradient
    # sent to that input, not the one of the input numbered like the producer's output
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    loss = model(torch.randn(4, 3)).pow(2).sum()
    with vizgrad.debug.watch_grads(loss):
        loss.backward()
    view = vizgrad.render.build_view(loss, params=dict(model.named_parameters()),
                                     show_grad=True)
    into = {edge.ref.next_node.name(): edge.details["grad"]["norm"] for edge in view.edges
            if isinstance(edge.ref, graph.GraphEdge) and edge.ref.node.name() == "AddmmBackward0"}
    assert into["TBackward0"] == pytest.approx(float(model.weight.grad.norm()), rel=1e-6)
    assert into["AccumulateGrad"] == pytest.approx(float(model.bias.grad.norm()), rel=1e-6)


def test_keep_grad_stats_steps_aside_on_a_failure(monkeypatch) -> None:
    from vizgrad.debug import keepstats

    def broken(*args, **kwargs):
        raise ValueError("broken on purpose")

    x = vizgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * x).sum()
    monkeypatch.setattr(keepstats, "node_entry", broken)
    with pytest.warns(RuntimeWarning) as caught:
        with vizgrad.debug.keep_grad_stats():
            loss.backward()
    # one warning per node, each naming it
    assert sorted(str(w.message).split("not watching ")[1].split()[0]
                  for w in caught) == ["MulBackward0",
                                                                  "SumBackward0"]
    assert x.grad.numpy().tolist() == [2.0, 4.0, 6.0]
    stats = vizgrad.debug.grad_stats({"x": x}, loss)
    assert any("MulBackward0" in line and "not watched" in line for line in stats.problems)


def _lstm_steps(detach: bool, steps: int = 3) -> tuple:
    """An LSTM whose state is carried across steps (detached or not), under capture."""
    torch.manual_seed(0)
    lstm, head = torch.nn.LSTM(4, 6, batch_first=True), torch.nn.Linear(6, 1)
    monitor = vizgrad.debug.GraphMonitor(detail_every=1)  # each step's figure checked
    state = (torch.zeros(1, 2, 6), torch.zeros(1, 2, 6))
    found = []
    with vizgrad.torch.capture(lstm):
        for _ in range(steps):
            if detach:
                state = tuple(s.detach() for s in state)
            out, state = lstm(torch.randn(2, 3, 4), state)  # the state never detached
            loss = head(out).pow(2).mean()
            found.append(monitor.step(loss))
            size = vizgrad.debug.memory_report(loss).total_bytes
            assert monitor.history[-1].saved_bytes == size > 0
            loss.backward(retain_graph=True)
    return monitor, found


def test_graph_monitor_sees_a_pytorch_state_never_detached() -> None:
    monitor, found = _lstm_steps(detach=False)
    assert all(record.newest_seq is not None for record in monitor.history)
    first, second = monitor.history[:2]
    assert first.newest_seq < second.newest_seq and second.nodes > first.nodes
    assert not found[0] and found[1] and found[2]
    assert found[1].old_nodes > 0 and found[1].attachments
    assert all(a.old_seq <= first.newest_seq < a.new_seq for a in found[1].attachments)
    assert any("out, state = lstm(" in line for line in found[1].lines)
    assert "made in an earlier step" in str(found[1])


def test_graph_monitor_is_quiet_for_a_detached_pytorch_state() -> None:
    monitor, found = _lstm_steps(detach=True, steps=4)
    assert not any(found) and all(item.checked for item in found)
    assert str(found[1]) == "step 2: the graph does not grow"


def test_graph_monitor_sees_a_running_pytorch_loss() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    monitor = vizgrad.debug.GraphMonitor()
    total_loss = 0
    found = []
    for _ in range(3):
        loss = model(torch.randn(2, 6)).pow(2).mean()
        total_loss += loss  # a running loss kept with its graph
        found.append(monitor.step(total_loss))
    assert not found[0] and found[1].old_nodes > 0 and found[2].old_nodes > found[1].old_nodes
    # no capture: the lines were not captured, and the warning says so
    assert "the line was not captured" in str(found[1])
    with vizgrad.torch.capture(model):
        total_loss = 0
        monitor = vizgrad.debug.GraphMonitor()
        for _ in range(2):
            loss = model(torch.randn(2, 6)).pow(2).mean()
            total_loss += loss
            warning = monitor.step(total_loss)
    assert any("total_loss += loss" in line for line in warning.lines)


def _looped_loss(model, times: int):
    out = model(torch.ones(2, 4))
    for _ in range(times):
        out = out.exp() * 0.5
    return out.sum()


@pytest.mark.parametrize("wrong", [(3, "x"), ("x", None), (None, None), ([1, 2], "a.txt")])
def test_graph_diff_refuses_what_is_not_a_graph(wrong) -> None:
    torch.manual_seed(0)
    loss = _looped_loss(torch.nn.Linear(4, 3), 1)
    a, b = wrong
    with pytest.raises(TypeError, match="graph_diff"):
        vizgrad.debug.graph_diff(a, b if b is not None else loss)
    with pytest.raises(TypeError, match="graph_diff"):
        vizgrad.debug.graph_diff(loss, a)


def test_graph_diff_compares_saved_graphs(tmp_path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    params = dict(model.named_parameters())
    one, two = _looped_loss(model, 1), _looped_loss(model, 3)
    vizgrad.render.save(one, tmp_path / "one.json", params=params)
    vizgrad.render.save(two, tmp_path / "two.json", params=params)
    saved = vizgrad.debug.graph_diff(tmp_path / "one.json", str(tmp_path / "two.json"))
    assert [(i["name"], i["count"]) for i in saved.added] == [
        ("ExpBackward0", 2), ("MulBackward0", 2)]
    assert not saved.removed and "no user lines" in saved.compared_by
    back = vizgrad.debug.graph_diff(tmp_path / "two.json", tmp_path / "one.json")
    assert back.removed == saved.added and not back.added
    # a live graph against a saved one, both ways
    live = vizgrad.debug.graph_diff(two, tmp_path / "one.json")
    assert live.removed == saved.added and not live.added
    same = vizgrad.debug.graph_diff(one, tmp_path / "one.json")
    assert not same and str(same).startswith("the graphs have the same nodes (compared by")
    loaded = vizgrad.render.load_view(tmp_path / "two.json")
    assert vizgrad.debug.graph_diff(loaded, one).removed == saved.added
    # a saved picture folded past max_nodes: what it hides is said, not counted as absent
    long = _looped_loss(model, 20)
    with pytest.warns(UserWarning, match="folded"):
        vizgrad.render.save(long, tmp_path / "folded.json", max_nodes=10)
    folded = vizgrad.debug.graph_diff(tmp_path / "folded.json", long)
    assert any("not compared" in note for note in folded.notes)
    assert "not compared" in str(folded)


@pytest.mark.parametrize("name", ["bert", "lstm_tagger"])
def test_grad_stats_judges_embeddings_by_the_rows_the_batch_used(name) -> None:
    case = build(name)
    loss = case.loss()
    with vizgrad.debug.watch_grads(loss) as record:
        loss.backward()
    stats = vizgrad.debug.grad_stats(case.model, record.walk)
    ids = case.batch["input_ids"]
    # BERT's word embeddings are tied to its output layer (every row gets a gradient
    # there): judged as a whole; positions 0..SEQ-1 and token type 0 are the rows used
    expected = ({"embed.weight": len(torch.unique(ids))} if name == "lstm_tagger" else
                {"bert.embeddings.position_embeddings.weight": ids.shape[1],
                 "bert.embeddings.token_type_embeddings.weight": 1})
    embeddings = {item.name: item.rows_used for item in stats.params if item.per_row}
    assert embeddings == expected
    assert not [line for line in stats.problems if "dead" in line]
    # after backward, without a record, the rows used cannot be seen: said, not judged
    plain = vizgrad.debug.grad_stats(case.model)
    assert not [line for line in plain.problems if "dead" in line]
    assert all(any(key in note and "not judged" in note for note in plain.notes)
               for key in expected)
    assert "not judged" in str(plain)


@pytest.mark.parametrize("kind", ["torch", "torch_bag", "vizgrad"])
def test_a_used_embedding_row_without_gradient_is_dead(kind) -> None:
    ids = [[1, 3, 3, 4], [4, 1, 3, 6]]
    if kind == "vizgrad":
        import vizgrad.nn as vnn

        model = vnn.Embedding(10, 3, padding_idx=6)
        picked = model(vizgrad.tensor(ids))
        mask = vizgrad.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0]]).reshape(2, 4, 1)
    else:
        bag = kind == "torch_bag"
        model = (torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=6) if bag
                 else torch.nn.Embedding(10, 3, padding_idx=6))
        flat = torch.tensor(ids).reshape(-1, 1) if bag else torch.tensor(ids)
        picked = model(flat).reshape(2, 4, 3) if bag else model(flat)
        mask = torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0]]).reshape(2, 4, 1)
    loss = (picked * mask).sum()  # every use of row 3 is masked out: it gets nothing
    with vizgrad.debug.watch_grads(loss) as record:
        loss.backward()
    item = vizgrad.debug.grad_stats(model, record.walk)["weight"]
    # rows 1, 3, 4 used (6 is padding: never given a gradient); row 3 got none
    assert item.per_row and item.rows_used == 3
    assert item.dead_units == 1 and item.flags == ["dead_units"]


SCRIPT = """
from tests.torch.real_models import build
case = build({name!r})
loss = case.loss()
loss.backward()
"""


@pytest.mark.parametrize("name", NAMES)
def test_every_tool_on_a_real_model(name, tmp_path) -> None:
    """Each tool on one training step of the model: nothing raised, nothing warned,
    every gradient as without vizgrad, and the figures right."""
    import json

    from vizgrad.debug.script_run import run_script

    expected = run_plain(name)
    case = build(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        monitor = vizgrad.debug.GraphMonitor()
        loss = case.loss()
        report = vizgrad.debug.memory_report(loss)
        assert report.activation_bytes > 0 and report.leaf_bytes > 0
        assert "saved " in vizgrad.make_dot(loss, show_memory=True).source
        assert not monitor.step(loss)
        assert monitor.history[0].saved_bytes == report.total_bytes
        with vizgrad.debug.GraphSaver(every=1, out=tmp_path / "runs", model=case.model,
                                    svg=False, background=False) as recorder:
            path = recorder.backward(loss)
        _same_grads(expected, case.grads())
        grads = json.loads((tmp_path / "runs" / "step_000001.grads.json").read_text())
        assert [p["name"] for p in grads["params"]] == list(expected)
        assert all(p["has_grad"] == (expected[p["name"]] is not None) for p in grads["params"])
        assert not [line for line in grads["problems"] if "not watched" in line]
        stats = vizgrad.debug.grad_stats(case.model, loss)
        assert all(item.rows_used is not None for item in stats.params if item.per_row)
        assert not [line for line in stats.problems if "dead rows" in line
                    and "wpe" not in line]  # (GPT-2's last position feeds no loss term)
        assert vizgrad.make_dot(loss, show_grad=True).source
        assert not vizgrad.debug.graph_diff(loss, path)  # the saved graph is this one
        after = vizgrad.debug.memory_report(loss)
        assert after.total_bytes == 0 and after.freed > 0
        # the next step, from the same model: no graph kept from this one
        case.model.zero_grad()
        step = monitor.step(case.loss())
        assert not step and step.checked and monitor.history[1].nodes == report.node_count
    # vizgrad render --show-grad runs the script with every node hooked
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(name=name), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        run = run_script(script, watch_grads=True, stop_at_second=True)
    assert run.error is None, run.error
    _same_grads(expected, run.namespace["case"].grads())
    walk = graph.walk(run.first_backward)
    recorded = [node.get_metadata(gradstats.METADATA_KEY) for node in walk.nodes
                if not node.is_accumulate]
    assert all(entry is not None and "norm" in entry for entry in recorded)


def test_what_the_tools_did_not_see_is_said() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    unused = torch.nn.Linear(2, 2)
    model[0].requires_grad_(False)  # frozen: no gradient by design
    loss = model(torch.randn(3, 4)).sum()
    loss.backward()
    stats = vizgrad.debug.grad_stats(dict(model.named_parameters())
                                     | {"unused.weight": unused.weight})
    assert [item.name for item in stats.params if "no_grad" in item.flags] == ["unused.weight"]
    assert stats["0.weight"].frozen and not stats["0.weight"].flags
    # a PyTorch backward run without watch_grads: op nodes are not coloured, and the
    # picture says their gradient was not watched (not that they got none)
    view = vizgrad.render.build_view(loss, show_grad=True)
    assert any("no node's gradient was watched" in note for note in view.notes)


def test_freed_pytorch_saves_of_unknown_size_are_drawn_as_unknown() -> None:
    case = build("resnet_block")
    loss = case.loss()
    loss.backward()
    view = vizgrad.render.build_view(loss, show_saved=True, max_nodes=None)
    saved = [node for node in view.nodes if node.kind == "saved"]
    unknown = [node for node in saved if node.details["dtype"] == "?"]
    assert unknown and all(node.details["freed"] for node in saved)
    from vizgrad.render.build import shape_text

    for node in unknown:  # never "() ?": that would read as a scalar
        shape = node.details["shape"]
        assert node.lines == ([f"{shape_text(shape)} ? (freed)"] if shape
                              else ["size unknown (freed)"])
    # the HTML viewer's details panel gives no byte count for them (it said 1 byte each)
    from vizgrad.render.viewer import _Facts

    panels = [_Facts().of(node) for node in graph.walk(loss).nodes]
    items = [item for panel in panels for item in panel.get("saved", ())
             if item.get("dtype") == "?"]
    assert items and all(item["bytes"] is None for item in items)


def test_rows_that_cannot_be_read_are_not_judged(monkeypatch) -> None:
    case = build("lstm_tagger")
    expected = run_plain("lstm_tagger")
    loss = case.loss()

    def broken(node):
        raise RuntimeError("indices unreadable")

    monkeypatch.setattr(gradstats, "rows_used", broken)
    with vizgrad.debug.watch_grads(loss) as record:
        loss.backward()
    _same_grads(expected, case.grads())
    stats = vizgrad.debug.grad_stats(case.model, record.walk)
    assert stats["embed.weight"].per_row and stats["embed.weight"].rows_used is None
    assert not stats["embed.weight"].flags
    assert any("embed.weight" in note for note in stats.notes)


@pytest.mark.parametrize("name", NAMES)
def test_graph_size_reads_pytorch_nodes_bare_with_the_topology_figures(name) -> None:
    """GraphMonitor's per-step walk on PyTorch (vizgrad/adapters/torch_size.py) gives
    what the full topology gives, before backward and after it freed the saves."""
    shape = importlib.import_module("vizgrad.graph.topology")
    case = build(name)
    loss = case.loss()
    before = graph.graph_size(loss)
    assert before == shape._size_of(graph.topology(loss))
    assert before.nodes > 10 and before.saved_bytes > 0 and before.newest_seq is not None
    loss.backward()
    after = graph.graph_size(loss)
    assert after == shape._size_of(graph.topology(loss))
    assert after.saved_bytes == 0 and after.nodes == before.nodes


class _Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad


def test_graph_size_on_a_custom_function_and_wrapped_numbers() -> None:
    shape = importlib.import_module("vizgrad.graph.topology")
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)
    h = _Cube.apply(torch.randn(3, 4) @ w) * 0.5  # ctx's save; 0.5: a wrapped number
    loss = torch.cat([h, h.exp()]).sum()  # a tuple-less save (exp's result) and cat's sizes
    before = graph.graph_size(loss)
    assert before == shape._size_of(graph.topology(loss)) and before.saved_bytes > 0
    loss.backward()
    assert graph.graph_size(loss) == shape._size_of(graph.topology(loss))
    assert graph.graph_size(loss).saved_bytes == 0
