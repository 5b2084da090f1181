"""A static graph's key says what its colours mean, not the backward graph's marks."""

import vizgrad
from vizgrad import nn, static
from vizgrad.render.html import key_html
from vizgrad.render.legend import key_entries, key_rows


def _step_graph():
    vizgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    graph = static.trace(lambda x: model(x).sum(), vizgrad.randn(5, 4))
    return static.compile_backward(graph)


def test_static_picture_key_names_phases_not_grad_fns():
    dot = vizgrad.make_dot(_step_graph()).source
    assert "forward op" in dot and "backward op (a grad_fn)" not in dot
    assert "gradient norm" not in dot
    assert ">colour<" in dot


def test_static_page_key_has_the_colour_table_and_its_title():
    from vizgrad.render.static_view import graph_view

    view = graph_view(_step_graph())
    assert key_rows(view) == []
    entries = key_entries(view)
    assert entries["title"] == "colour" and entries["scale"]
    page = key_html(entries)
    assert "colour " in page and "gradient norm" not in page
