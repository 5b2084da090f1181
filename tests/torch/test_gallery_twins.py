"""The gallery draws each PyTorch example beside its vizgrad twin."""

from __future__ import annotations

from pathlib import Path

from vizgrad.cli.gallery import EXAMPLES, Entry, index_html

GALLERY = Path(__file__).resolve().parents[2] / "gallery"


def test_each_pytorch_example_has_a_vizgrad_twin_drawn_beside_it(tmp_path):
    twins = {e.name: e.twin for e in EXAMPLES if e.twin}
    assert twins == {"torch_mlp_digits": "mlp_digits", "torch_cnn": "cnn",
                     "torch_lstm": "lstm", "torch_debug_nan": "debug_nan",
                     "torch_debug_vanishing": "debug_vanishing",
                     "torch_debug_rnn_detach": "debug_rnn_detach"}
    # a PyTorch example without a twin still needs torch
    assert {e.name for e in EXAMPLES if e.needs == "torch"} == {
        *twins, "torch_debug_total_loss"}
    by_name = {e.name: e for e in EXAMPLES}
    entries = [Entry(by_name[name], True, 0.1, "ok", tmp_path / f"{name}.svg")
               for name in ("cnn", "torch_cnn")]
    page = index_html(entries, GALLERY)
    section = page[page.index('<section id="torch_cnn">'):]
    assert '<div class="twins">' in section
    assert section.index('<img src="cnn.svg"') < section.index('<img src="torch_cnn.svg"')
    assert "vizgrad (cnn.py)" in section and "PyTorch (torch_cnn.py)" in section
    alone = index_html([entries[1]], GALLERY)  # twin not rendered: the picture alone
    assert '<div class="twins">' not in alone and '<img src="torch_cnn.svg"' in alone
