"""Op-table rows for basic indexing: ``x[key]`` records PyTorch's chain of views (a
``SelectBackward0`` per int, a ``SliceBackward0`` per slice that does not keep its whole
dim, an ``UnsqueezeBackward0`` per None, ``AliasBackward0`` for a key that selects
everything); ``tests/compat/test_getitem_parity.py`` compares the whole graphs."""

from __future__ import annotations

from .optable import Arg, OpCase

A = Arg
X = A((4, 5, 6))


def key_row(name, key, covers, node_name, shape=(4, 5, 6), torch_key="same"):
    """A row indexing one tensor of ``shape`` with ``key`` in both libraries."""
    other = key if torch_key == "same" else torch_key
    torch_fn = None if other is None else (lambda a: a[other])
    return OpCase(name, lambda a: a[key], [A(shape)], covers, torch_fn, node_name)


S = slice
CASES = [
    key_row("getitem_int", 0, ("Select",), "SelectBackward0"),
    key_row("getitem_negative_int", -1, ("Select",), "SelectBackward0"),
    key_row("getitem_two_ints", (1, 2), ("Select",), "SelectBackward0"),
    key_row("getitem_three_ints_0d", (1, 2, -3), ("Select",), "SelectBackward0"),
    key_row("getitem_whole_then_int", (S(None), 0), ("Select",), "SelectBackward0"),
    key_row("getitem_int_then_slice", (0, S(1, None)), ("Select", "Slice"), "SliceBackward0"),
    key_row("getitem_ellipsis_int", (Ellipsis, -1), ("Select",), "SelectBackward0"),
    key_row("getitem_none_int", (None, 0), ("Unsqueeze", "Select"), "SelectBackward0"),
    key_row("getitem_full_slice", S(None), ("Slice",), "SliceBackward0"),
    key_row("getitem_negative_start", S(-2, None), ("Slice",), "SliceBackward0"),
    key_row("getitem_end_past_size", S(1, 100), ("Slice",), "SliceBackward0"),
    key_row("getitem_empty_slice", (S(None), S(2, 2)), ("Slice",), "SliceBackward0"),
    key_row("getitem_slices_none", (S(1, 3), None, S(None, None, 2)), ("Slice", "Unsqueeze"),
            "SliceBackward0"),
    key_row("getitem_whole_in_tuple", (S(None), S(None, 100)), ("Alias",), "AliasBackward0"),
    key_row("getitem_ellipsis_alone", Ellipsis, ("Alias",), "AliasBackward0"),
    key_row("getitem_empty_tuple", (), ("Alias",), "AliasBackward0"),
    key_row("getitem_none_alone", None, ("Unsqueeze",), "UnsqueezeBackward0"),
    key_row("getitem_int_ellipsis_none", (0, Ellipsis, None), ("Select", "Unsqueeze"),
            "UnsqueezeBackward0"),
    key_row("getitem_0d_ellipsis", Ellipsis, ("Alias",), "AliasBackward0", shape=()),
    # PyTorch refuses a negative step; vizgrad takes NumPy's reversed view (one op)
    key_row("getitem_negative_step", (S(None), S(None, None, -1)), ("BasicIndex",),
            "SliceBackward0", torch_key=None),
]
