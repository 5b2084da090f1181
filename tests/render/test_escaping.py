"""Property test: no user text can break the DOT or add markup to the SVG/HTML.

Arbitrary Unicode names, scopes and attribute strings (quotes, backslashes, braces,
``<script>``, newlines, colons, control characters) go through make_dot; Graphviz
itself must parse the DOT, and the SVG must be well-formed XML whose element and
attribute names are exactly those a plain-text graph produces.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import vizgrad as vg
from vizgrad.render import build_view, dot_binary, run_dot, to_dot, to_html

pytestmark = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")

NASTY = ['"', "\\", "\\\"", "{", "}", "<script>alert(1)</script>", "\n", "\r\n", ":", "]]>",
         "&amp;", "<<>>", "\\N", "\\G", "\x00", "\x1b[31m", "\ufffe", "-->", "'", "\t",
         "<!--", "\\l", "|", "subgraph", "digraph {", ";", "=", "é中文🙂"]

text = st.one_of(
    st.text(max_size=30),
    st.lists(st.sampled_from(NASTY), min_size=1, max_size=6).map("".join),
    st.tuples(st.text(max_size=8), st.sampled_from(NASTY), st.text(max_size=8)).map("".join),
)


class Tagged(vg.autograd.Function):
    @staticmethod
    def forward(ctx, x, label):
        ctx.label = label
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None


def _graph(name: str, scope: str, attribute: str, output: str):
    x = vg.ones(2, requires_grad=True)
    x.name = name
    with vg.scope(scope):
        y = Tagged.apply(x, attribute)
    return {output: (y * y).sum()}, {name: x}


def _svg_names(svg: bytes) -> tuple[set, set]:
    root = ET.fromstring(svg)
    tags = {element.tag for element in root.iter()}
    attributes = {key for element in root.iter() for key in element.attrib}
    return tags, attributes


OPTIONS = {"show_attrs": True, "show_saved": True, "show_stack": True, "cluster": "scope"}
_BASE = _svg_names(run_dot(vg.make_dot(*_graph("x", "s", "a", "out"), **OPTIONS).source,
                           "svg"))


@settings(max_examples=int(os.environ.get("VIZGRAD_PROPERTY_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(name=text, scope=text, attribute=text, output=text)
@example(name='"\\', scope="a.<script>.b", attribute="\\", output="</text><script>")
@example(name="\x00\x01\x7f", scope="\n\n", attribute="{}[]:;", output="\\")
def test_user_text_cannot_break_dot_or_inject_svg(name: str, scope: str, attribute: str,
                                                   output: str) -> None:
    roots, params = _graph(name, scope, attribute, output)
    dot = vg.make_dot(roots, params, **OPTIONS)
    svg = run_dot(dot.source, "svg")  # raises if Graphviz cannot parse the DOT
    tags, attributes = _svg_names(svg)
    assert not any(tag.lower().endswith("script") for tag in tags)
    assert tags <= _BASE[0], tags - _BASE[0]
    assert attributes <= _BASE[1], attributes - _BASE[1]
    assert not any(key.lower().startswith("on") for key in attributes)
    page = to_html(build_view(roots, params=params, **OPTIONS), svg.decode("utf-8"))
    assert page.count("<script") == 2  # the data block and vizgrad's own script


def test_escaped_text_survives_to_svg() -> None:
    roots, params = _graph('a"b\\c<d>', "m", "k: {v}", "o")
    svg = run_dot(to_dot(build_view(roots, params=params, **OPTIONS)).source, "svg").decode()
    texts = "".join(ET.fromstring(svg).itertext())
    assert 'a"b\\c<d>' in texts and "k: {v}" in texts
