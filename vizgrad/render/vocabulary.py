"""The picture's vocabulary: what a box is (its kind), what is marked on it (its marks),
and the one palette every output colours them with.

DOT takes its colours from :data:`THEMES`; the viewer page is given the same palette,
as data (:func:`page_palette`, in the page's JSON: the colours of the boxes the page
lays out itself) and as CSS (:func:`palette_css`: the rules that recolour Graphviz's
light drawing on a dark screen, and the key panel's colours), so ``viewer.js`` and
``viewer.css`` hold no colour of a kind of their own.  The JSON document
(docs/json_schema.md) carries kinds and marks as these strings;
``tests/render/test_vocabulary.py`` holds the schema's lists and the viewer's script to
them.

Example
-------
>>> KINDS[:3]
('op', 'leaf', 'output')
>>> THEMES["light"]["output"], svg_colour(THEMES["light"]["output"])  # as Graphviz writes it
('darkolivegreen1', '#caff70')
"""

from __future__ import annotations

from typing import Literal, get_args

#: What a box is: a backward node (``op``), a tensor that requires grad (``leaf``), the
#: tensor whose graph is drawn (``output``), a view's ``base``, a ``saved`` tensor, folded
#: boxes (``fold``), a collapsed module (``group``), the op that raised (``error``) or a
#: static graph's ``buffer``.
Kind = Literal["op", "leaf", "output", "base", "saved", "fold", "group", "error", "buffer"]
KINDS: tuple[Kind, ...] = get_args(Kind)

#: What is marked on a box: its saved tensors ``freed`` by backward, a ``nan`` or ``zero``
#: gradient, the ``highlight`` of the failing node, a saved tensor packed by
#: ``saved_tensors_hooks`` (``hooked``), the op that raised (``error``), a box only in the
#: second of two compared graphs (``added``), a static op that writes in place
#: (``inplace``).
Mark = Literal["freed", "nan", "zero", "highlight", "hooked", "error", "added", "inplace"]
MARKS: tuple[Mark, ...] = get_args(Mark)

#: The key's row of each backward-graph kind, in the order the key lists them: (sample
#: text, meaning).  A static graph's buffers are keyed by its own colour table.
KIND_KEY: dict[Kind, tuple[str, str]] = {
    "op": ("Op", "backward op (a grad_fn)"),
    "leaf": ("name", "leaf tensor that requires grad (a parameter)"),
    "output": ("out", "output: the tensor whose graph this is"),
    "base": ("base", "base of a view (dotted arrow to the view)"),
    "saved": ("saved", "tensor saved for backward (line to the op)"),
    "fold": ("...", "nodes folded to fit (max_nodes)"),
    "group": ("module", "a collapsed module: its ops counted"),
    "error": ("Op", "the op that raised, fed by its inputs (green: name, shape, dtype)"),
}

#: The palette of each theme: a fill per kind (pytorchviz's X11 names in the light
#: theme), then the picture's other colours: ``background`` (None: Graphviz's white),
#: ``font``, ``edge``, ``cluster`` (module boxes and the key's frame), ``highlight``
#: (the failing node's border), ``error_line`` (the border of the op that raised), and
#: two the page's own drawings use: ``label`` (the text on its arrows) and ``title``
#: (its module boxes' titles).
THEMES: dict[str, dict[str, str | None]] = {
    "light": {"op": "lightgray", "leaf": "lightblue", "saved": "orange",
              "output": "darkolivegreen1", "base": "darkolivegreen3", "fold": "#ffe9a8",
              "group": "#e3d5f2", "background": None, "font": "black", "edge": "black",
              "cluster": "#888888", "error": "#ff6b6b", "highlight": "#e00000",
              "error_line": "#b00000", "label": "#555555", "title": "#444444"},
    "dark": {"op": "#4d4d4d", "leaf": "#2c5f85", "saved": "#a65f00", "output": "#52702b",
             "base": "#34501c", "fold": "#6b5a1e", "group": "#4f3b66",
             "background": "#1e1e1e", "font": "#eeeeee", "edge": "#c0c0c0",
             "cluster": "#9a9a9a", "error": "#b3261e", "highlight": "#e00000",
             "error_line": "#b00000", "label": "#bbbbbb", "title": "#bbbbbb"},
}

#: The palette's X11 names that are not CSS colours, and the hex Graphviz writes for
#: them in SVG (the names CSS shares, ``lightgray``, ``orange``, it writes as they are).
_X11_ONLY = {"darkolivegreen1": "#caff70", "darkolivegreen3": "#a2cd5a"}

#: The palette's entries the page uses beside the kinds' fills, as CSS variables.
_PAGE_COLOURS = ("cluster", "highlight", "font", "label", "title")


def svg_colour(colour: str) -> str:
    """``colour`` as Graphviz writes it in SVG: a colour CSS knows (the page's)."""
    return _X11_ONLY.get(colour, colour)


def page_palette(theme: str) -> dict[str, str]:
    """The fills of ``theme`` by kind, as the page draws them (JSON for ``viewer.js``)."""
    palette = THEMES[theme]
    return {kind: svg_colour(colour) for kind in KINDS
            if (colour := palette.get(kind)) is not None}


def palette_css() -> str:
    """The page's colours from the palette: CSS variables (``--vg-op``, a kind's fill, as
    the key's samples are drawn; ``--vg-label``, ...) that follow the page's theme
    (``html.vg-dark``: a page saved dark, or a light one on a dark screen), the rules
    that colour the page's own drawings' frames, arrow labels and titles with them, and
    the rules that draw a light drawing in the dark theme's colours: Graphviz's when the
    reader's screen is dark (not on a page saved dark, ``vg-forced``, whose picture
    Graphviz drew dark already), and the page's own (``svg.vg-drawn``, drawn in the
    light theme's black and white) whenever the page is dark."""
    light, dark = THEMES["light"], THEMES["dark"]

    def variables(palette: dict[str, str | None]) -> str:
        names = [kind for kind in KINDS if palette.get(kind)] + list(_PAGE_COLOURS)
        return " ".join(f"--vg-{name}: {svg_colour(str(palette[name]))};" for name in names)

    def dark_rule(target: str, declaration: str) -> str:
        picks = ("html.vg-dark:not(.vg-forced) svg", "html.vg-dark svg.vg-drawn")
        return ", ".join(f"{pick} {target}" for pick in picks) + f" {{ {declaration} }}"

    rules = [f":root {{ {variables(light)} }}", f"html.vg-dark {{ {variables(dark)} }}",
             "svg .vg-frame { stroke: var(--vg-cluster); }",
             "svg .vg-label { fill: var(--vg-label); }",
             "svg .vg-scope-title { fill: var(--vg-title); }",
             dark_rule('g.graph > polygon[fill="white"]', f"fill: {dark['background']};"),
             # the halo under arrows' texts (svg_labels.py) follows the background
             dark_rule(".vg-edge-labels text", f"stroke: {dark['background']};"),
             dark_rule(f'[stroke="{light["edge"]}"]', f"stroke: {dark['edge']};"),
             dark_rule(f'[fill="{light["edge"]}"]', f"fill: {dark['edge']};"),
             # the page's own drawings' labels and titles: their palette colours above
             dark_rule("text:not([fill]):not(.vg-label):not(.vg-scope-title)",
                       f"fill: {dark['font']};")]
    for kind in KINDS:
        if kind in light and light[kind] != dark[kind]:
            rules.append(dark_rule(f'[fill="{svg_colour(str(light[kind]))}"]',
                                   f"fill: {dark[kind]};"))
    rules.append(dark_rule(f'[stroke="{light["cluster"]}"]', f"stroke: {dark['cluster']};"))
    return "/* the palette (vocabulary.py) */\n" + "\n".join(rules) + "\n"
