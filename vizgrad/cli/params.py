"""Click parameter types shared by the commands, checked when the options are parsed
(before the script runs)."""

from __future__ import annotations

import math

import click

from vizgrad.render.output import seconds_problem


class Seconds(click.ParamType):
    """A time limit: a finite number of seconds, more than 0 and at most a week
    (``vizgrad.render.output.MAX_SECONDS``).  ``nan``, ``inf`` and ``1e300`` used to pass
    and end in a traceback once the script had run."""

    name = "seconds"

    def convert(self, value, param, ctx):  # noqa: ANN001, ANN201 - click's signature
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        try:
            number = float(number)
        except OverflowError:  # an int too big for a float
            number = math.inf
        problem = seconds_problem(number)
        if problem is not None:
            self.fail(f"{value!r} {problem}", param, ctx)
        return number
