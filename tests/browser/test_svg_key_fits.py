"""The picture's key, drawn by Graphviz into an SVG, holds its text when a browser
draws it: Graphviz measures hinted monospace glyphs narrower than Chromium renders
them, and the key's longest line used to run past the box's right border."""

from __future__ import annotations

import vizgrad as vg


def test_every_key_line_stays_inside_the_key_box(browser, tmp_path):
    model = vg.nn.Sequential(vg.nn.Linear(4, 3), vg.nn.ReLU(), vg.nn.Linear(3, 2))
    vg.manual_seed(0)
    loss = model(vg.randn(5, 4)).sum()
    path = tmp_path / "key.svg"
    path.write_bytes(vg.make_dot(loss, params=dict(model.named_parameters()))
                     .pipe(format="svg"))
    page = browser.new_page()
    try:
        page.goto(path.as_uri())
        box, texts = page.evaluate("""() => {
            const key = [...document.querySelectorAll('g.node')]
                .find(g => g.querySelector('title').textContent === 'legend');
            const r = [...key.querySelectorAll('polygon')]  // the outer border: widest
                .map(p => p.getBoundingClientRect())
                .reduce((a, b) => (b.width > a.width ? b : a));
            return [[r.left, r.right],
                    [...key.querySelectorAll('text')].map(t => {
                        const b = t.getBoundingClientRect();
                        return [t.textContent, b.left, b.right];
                    })];
        }""")
    finally:
        page.close()
    left, right = box
    assert len(texts) >= 5  # the title and one line per mark
    for text, start, end in texts:
        assert left <= start and end <= right, (text, start, end, left, right)
