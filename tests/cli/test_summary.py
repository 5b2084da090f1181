"""``vizgrad.debug.summary``: the statistics and tree behind ``vizgrad inspect``."""

from __future__ import annotations

import json

import vizgrad
import vizgrad.nn as nn
from vizgrad.debug.summary import graph_summary, tree_lines


def _model_loss():
    vizgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    model.scope_name = "model"
    loss = model(vizgrad.randn(5, 4)).pow(2).mean()
    return model, loss


def test_counts_leaves_and_memory() -> None:
    model, loss = _model_loss()
    names = {id(p): f"model.{n}" for n, p in model.named_parameters()}
    summary = graph_summary({"loss": loss}, names=names)
    json.dumps(summary)  # plain data
    assert summary["nodes"] == len(summary["graph"]) and summary["edges"] > 0
    assert summary["ops"]["AccumulateGrad"] == 4
    assert {leaf["name"] for leaf in summary["leaves"]} == set(names.values())
    assert summary["parameters"] == 4 and summary["parameter_elements"] == 4 * 3 + 3 + 3 + 1
    weight = next(leaf for leaf in summary["leaves"] if leaf["name"] == "model.0.weight")
    assert weight["shape"] == [3, 4] and weight["bytes"] == 48 and weight["parameter"]
    saved = summary["saved"]
    assert saved["total_bytes"] == saved["held_bytes"] > 0
    assert sum(item["bytes"] for item in saved["by_scope"]) == saved["total_bytes"]
    assert any(item["scope"].startswith("model") for item in saved["by_scope"])
    assert summary["roots"][0]["name"] == "loss" and summary["depth"] >= 5
    loss.backward()
    after = graph_summary(loss)
    assert after["saved"]["held_bytes"] == 0 and after["saved"]["total_bytes"] > 0
    assert all(leaf["has_grad"] for leaf in after["leaves"])


def test_depth_and_widest_level() -> None:
    a = vizgrad.ones(3, requires_grad=True)
    parts = [a * k for k in range(1, 6)]          # five Mul nodes side by side
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    summary = graph_summary(total)
    assert summary["widest_level"]["width"] >= 2
    assert summary["depth"] == max(node["level"] for node in summary["graph"]) + 1
    # the leaf is at the bottom: deeper than every Mul that reads it
    leaf = next(node for node in summary["graph"] if node["name"] == "AccumulateGrad")
    assert leaf["level"] == summary["depth"] - 1


def test_user_lines_point_at_this_file() -> None:
    _, loss = _model_loss()
    lines = [node["line"] for node in graph_summary(loss)["graph"] if node["line"]]
    assert lines and all(line.startswith("test_summary.py:") for line in lines)


def test_tree_expands_shared_nodes_once() -> None:
    a = vizgrad.ones(2, requires_grad=True)
    shared = a.exp()
    loss = (shared * 2 + shared * 3).sum()
    entries = tree_lines(graph_summary(loss))
    exp_entries = [e for e in entries if "node" in e and e["node"]["name"] == "ExpBackward0"]
    assert [e["repeat"] for e in exp_entries] == [False, True]
    assert entries[0]["depth"] == 0 and entries[0]["node"]["name"] == "SumBackward0"


def test_tree_limits_and_a_deep_chain() -> None:
    x = vizgrad.ones(2, requires_grad=True)
    y = x
    for _ in range(5000):  # far past Python's recursion limit if anything recursed
        y = y * 1.0
    summary = graph_summary(y.sum())
    assert summary["nodes"] == 5002 and summary["depth"] == 5002
    entries = tree_lines(summary, max_depth=10, max_lines=400)
    assert len(entries) == 11 and entries[-1] == {"depth": 10, "more": 1}
    entries = tree_lines(summary, max_depth=10_000, max_lines=50)
    assert entries[-1]["more"] == 5002 - 50 and len(entries) == 51
