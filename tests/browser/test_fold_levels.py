"""Each fold level of the page draws exactly the Python fold it is named after, on GPT-2
(transformers, from a config: nothing downloaded): the page's own fold of the scope
tree (its drawing when a level is laid out in the page, and what folding one scope at a
time reaches) against ``fold.collapse_scopes`` at depths 1..3.  GPT-2's modules have ops
of their own beside their children (``transformer`` adds the embeddings before ``h``
and reshapes after ``ln_f``): the page drew those one by one, fold.py as boxes (#28)."""

from __future__ import annotations

from pathlib import Path

import pytest

import vizgrad
from vizgrad.render import RenderOptions
from vizgrad.render.viewer import build_levels

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

# what the page's fold state of a level draws: each box, a folded scope (the graph nodes
# it stands for, one or many) or a graph node drawn itself
FOLDED = """(index) => { const v = vizgradViewer, fold = v.fold;
  const shown = fold.visible(fold.fromLevel(v.levels[index]));
  return shown.ids.map(id => shown.boxes[id] ? shown.boxes[id].details.members.slice().sort()
                                             : id); }"""
DRAWN = """() => Array.from(document.querySelectorAll('#vg-canvas svg.vg-graph g.node'))
  .map(e => { const b = vizgradViewer.drawing().boxes[e.id];
              return b && b.details.members ? b.details.members.slice().sort() : e.id; })"""


def _partition(view) -> set:  # noqa: ANN001
    """A level's boxes: a group as the set of its members, a graph node as its id."""
    return {frozenset(n.details["members"]) if n.details.get("members") else n.id
            for n in view.nodes}


def _boxes(drawn: list) -> set:
    return {frozenset(item) if isinstance(item, list) else item for item in drawn}


def test_gpt2_fold_levels_draw_exactly_the_python_folds(open_page, tmp_path: Path) -> None:
    from tests.torch.real_models import build

    case = build("gpt2")
    with vizgrad.torch.capture(case.model):
        loss = case.loss()
    _, levels, _ = build_levels(loss, RenderOptions.make(), None)
    opened = open_page(vizgrad.render.save(loss, tmp_path / "gpt2.html"))
    page = opened.page
    names = page.evaluate("vizgradViewer.levels.map(l => l.name)")
    assert names == [level.name for level in levels]
    checked = []
    for depth in (1, 2, 3):
        name = f"modules collapsed to depth {depth}"
        index = names.index(name)
        python = _partition(levels[index].view)
        assert any(isinstance(box, frozenset) for box in python)
        folded = _boxes(page.evaluate(FOLDED, index))
        assert folded == python, name  # the page's own fold of the level
        assert page.evaluate(f"vizgradViewer.levels[{index}].exact")
        page.evaluate(f"vizgradViewer.useLevel({index}, false)")
        assert _boxes(page.evaluate(DRAWN)) == python, name
        checked.append(len(python))
    # transformer's own ops before h and after ln_f: two boxes from depth 2 on
    own = [b for b in page.evaluate("""() => { const f = vizgradViewer.fold, out = [];
        for (let s = 0; s < f.count; s++) { out.push(f.title(s)); } return out; }""")
           if b.startswith("transformer") and "." not in b.split(" ")[0]]
    assert sorted(own) == ["transformer", "transformer", "transformer (after transformer.ln_f)"]
    assert checked == sorted(checked) and opened.errors == []


def test_a_second_parameters_arrows_drawn_back_keep_their_direction(open_page,
                                                                   tmp_path: Path) -> None:
    """A BatchNorm's bias sits at its op's right, its arrows written head first with
    ``dir=back`` (class vg-back, #28): the page reads them the right way round, so the
    bias is upstream of the op (its paths light the op below it, not above)."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, bias=False), torch.nn.BatchNorm2d(4))
    torch.manual_seed(0)
    with vizgrad.torch.capture(model):
        loss = model(torch.randn(2, 3, 5, 5)).sum()
    full, levels, _ = build_levels(loss, RenderOptions.make(), None)
    bias = next(n.id for n in full.nodes if n.title == "1.bias")
    norm = next(n.id for n in full.nodes if n.title == "NativeBatchNormBackward0")
    opened = open_page(vizgrad.render.save(loss, tmp_path / "bn.html"))
    page = opened.page
    everything = [level.name for level in levels].index("everything")
    page.evaluate(f"vizgradViewer.useLevel({everything}, false)")
    assert page.locator("#vg-canvas g.edge.vg-back").count() == 2
    page.evaluate(f"vizgradViewer.select('{bias}', false)")
    down = set(page.eval_on_selector_all("#vg-canvas g.node.vg-down", "els => els.map(e => e.id)"))
    up = set(page.eval_on_selector_all("#vg-canvas g.node.vg-up", "els => els.map(e => e.id)"))
    assert norm in down and not up
    assert page.locator("#vg-canvas g.edge.vg-back.vg-down").count() == 2
    assert opened.errors == []
