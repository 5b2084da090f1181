"""Box and cluster ids: every id a picture uses is made by :func:`box_id` here.

Ids are DOT identifiers (letters, digits, ``_``), SVG element ids and the keys the
interactive page and JSON files use, so they must be stable from run to run and
unique in a picture.  A backward node is numbered by its ``seq`` relative to the
oldest node drawn (``n0``); what belongs to it shares its number (its leaf tensor
``v0``, its saved tensors ``n0s1``), so the same program draws the same ids.

====================  ==========  ===================================================
kind                  id          what
====================  ==========  ===================================================
``op``                ``n3``      a backward node (``n_5`` when it has no ``seq``)
``leaf``              ``v3``      the tensor of gradient accumulator ``n3``
``saved``             ``n3s1``    saved tensor number 1 of ``n3``
``output``            ``t0``      root tensor number 0
``base``              ``t0b``     the base of root tensor 0 (a view)
``group``             ``g2``      a collapsed module scope
``blocks``            ``r0``      the folded middle of a family of repeated blocks
``siblings``          ``f7``      many same-named inputs of one node, folded
``chain``             ``c1``      the middle of a long single-file chain, folded
``rest``              ``rest``    the nodes farthest from the outputs (max_nodes)
``failed``            ``failed``  the op that raised (``--at-error``)
``cluster``           ``cluster_4``   a module box (``cluster_`` makes it a DOT cluster)
``kept_block``        ``cluster_r0``  the box around a kept first/last repeated block
====================  ==========  ===================================================

Example
-------
>>> box_id("op", 3), box_id("leaf", 3), box_id("saved", 3, 1), box_id("base", 0)
('n3', 'v3', 'n3s1', 't0b')
"""

from __future__ import annotations

from typing import Any

#: kind -> (prefix, suffix) around the number; ``saved`` puts its index after the suffix.
_FORMS = {
    "op": ("n", ""), "leaf": ("v", ""), "saved": ("n", "s"), "output": ("t", ""),
    "base": ("t", "b"), "group": ("g", ""), "blocks": ("r", ""), "siblings": ("f", ""),
    "chain": ("c", ""), "cluster": ("cluster_", ""), "kept_block": ("cluster_r", ""),
}
#: Boxes of which a picture has at most one.
_SINGLE = {"rest", "failed"}


def box_id(kind: str, number: int | str = "", index: int | None = None) -> str:
    """The id of a box (or cluster) of ``kind`` numbered ``number``.

    ``number`` is an int, or ``"_5"`` for a backward node without a ``seq`` (the
    walk's position instead); ``index`` numbers a saved tensor within its node.
    """
    if kind in _SINGLE:
        return kind
    prefix, suffix = _FORMS[kind]
    if kind == "saved":
        return f"{prefix}{number}{suffix}{index}"
    return f"{prefix}{number}{suffix}"


def box_ids(kind: str, numbers: dict[Any, int | str]) -> dict[Any, str]:
    """``box_id(kind, number)`` for every value of ``numbers`` (one call per picture:
    the renderer's hot path, so the table is read once)."""
    prefix, suffix = _FORMS[kind]
    return {key: f"{prefix}{number}{suffix}" for key, number in numbers.items()}


def node_numbers(keys: list[Any], seqs: list[int | None]) -> dict[Any, int | str]:
    """key -> the number of its backward node in ids: ``seq`` minus the oldest ``seq``
    of the picture (``0`` is the oldest node), or ``"_<position>"`` (its place in
    ``keys``) for a node without a ``seq``."""
    if seqs and None not in seqs:  # every node has one (PyTorch's, vizgrad's own)
        base = min(seqs)
        return dict(zip(keys, [seq - base for seq in seqs] if base else seqs))
    known = [seq for seq in seqs if seq is not None]
    base = min(known) if known else 0
    return {key: seq - base if seq is not None else f"_{position}"
            for position, (key, seq) in enumerate(zip(keys, seqs))}
