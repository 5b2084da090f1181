"""What a command was asked, as one object built from click's parameters.

Example
-------
>>> request = RenderRequest.from_params({"script": "train.py", "target": "loss",
...                                      "show_attrs": True, "cluster": None})
>>> request.target, request.picture, request.run_all
('loss', {'show_attrs': True, 'cluster': None}, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from vizgrad.render.output import DEFAULT_LAYOUT_TIMEOUT

#: ``render`` options that need PyTorch's module scopes or user lines: with one of them
#: (or ``--at-error``) a PyTorch script runs under ``vizgrad.debug.torch_script``'s capture
#: even with ``--no-capture`` (by default it always does).
SCOPE_OPTIONS = ("cluster", "collapse", "depth", "show_stack")


@dataclass
class ScriptRequest:
    """The script, its arguments, how it runs and which of its graphs is chosen."""

    script: str
    script_args: tuple[str, ...] = ()
    target: str | None = None
    step: int | str | None = None
    at_error: bool = False
    timeout: float | None = None
    quiet: bool = False

    @classmethod
    def from_params(cls, params: dict[str, Any]):  # noqa: ANN206 - the subclass itself
        """The request from click's keyword arguments; those that are no field of the
        request are the picture's options (``picture``), where the request has them."""
        names = {item.name for item in fields(cls)}
        known = {key: value for key, value in params.items() if key in names}
        rest = {key: value for key, value in params.items() if key not in names}
        if rest:
            if "picture" not in names:
                raise TypeError(f"{cls.__name__} has no {', '.join(sorted(rest))}")
            known["picture"] = rest
        return cls(**known)

    @property
    def run_all(self) -> bool:
        """Run the script to its end (``--target`` and ``--at-error`` need all of it);
        else it is stopped when a second ``backward()`` starts."""
        return bool(self.target or self.at_error)


@dataclass
class RenderRequest(ScriptRequest):
    """``vizgrad render``: the script's request, where to write and how to draw."""

    output: Path | None = None
    open_result: bool = False
    layout_timeout: float = DEFAULT_LAYOUT_TIMEOUT
    anomaly: bool = False
    static_trace: bool = False  # --static
    static_name: str | None = None  # --static-graph NAME
    capture: bool = True
    #: the picture's options as flags (``show_attrs``, ``cluster``, ``max_nodes`` ...;
    #: None where not given): ``rendering.render_options`` makes the renderer's keywords
    picture: dict[str, Any] = field(default_factory=dict)

    @property
    def run_all(self) -> bool:
        return bool(self.target or self.at_error or self.anomaly)

    @property
    def scopes(self) -> bool:
        """Record PyTorch's module scopes, user lines and failing call."""
        return self.capture or self.at_error or any(
            self.picture.get(key) for key in SCOPE_OPTIONS)


@dataclass
class InspectRequest(ScriptRequest):
    """``vizgrad inspect``: the script's request and the report's form."""

    as_json: bool = False
    max_depth: int = 40
    max_lines: int = 400
