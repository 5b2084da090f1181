"""The commands' failures as one exception: what went wrong, what to do, the exit code."""

from __future__ import annotations

from typing import Any

import click


class CommandError(click.ClickException):
    """A command failed.  click prints it once, as ``error: message`` with the hint on
    the next line (and the tensors the script left, given ``candidates``), and exits
    with ``exit_code``: 2 when the command line must change, 1 for anything else
    (:data:`vizgrad.cli.main.EXIT_RULE`).

    Example
    -------
    >>> problem = CommandError("script not found: nope.py", "usage: ...", exit_code=2)
    >>> problem.said(), problem.exit_code
    ('script not found: nope.py (usage: ...)', 2)
    """

    def __init__(self, message: str, hint: str | None = None, exit_code: int = 1,
                 candidates: list | None = None) -> None:
        super().__init__(message)
        self.hint = hint
        self.exit_code = exit_code
        self.candidates = candidates

    def said(self) -> str:
        """The error on one line, the hint in brackets (``inspect --json``'s ``error``)."""
        from vizgrad.render.escape import clean

        return clean(self.message) + (f" ({clean(self.hint)})" if self.hint else "")

    def show(self, file: Any = None) -> None:
        from . import console as out

        stderr = out.consoles()[1]
        out.error(stderr, self.message, self.hint)
        if self.candidates is not None:
            out.print_candidates(stderr, self.candidates)
