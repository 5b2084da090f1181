"""Deprecated name of :mod:`vizgrad.debug.script_run` (running a user's script).

"Capture" means one thing in vizgrad: taking an op's origin, its module scope and the
user's call site, as it runs (``vizgrad.torch.capture``, ``vizgrad.capture_stack``;
docs/architecture.md, Glossary).  This module ran scripts, so it is
:mod:`vizgrad.debug.script_run` now; the old name stays for code that imports it
(docs/cli.md showed ``from vizgrad.debug.capture import run_script``).  New code
imports :mod:`vizgrad.debug.script_run`.
"""

from __future__ import annotations

import warnings

from .script_run import (  # noqa: F401  (the old module's public names)
    REAL_EXIT,
    NotAPythonScriptError,
    ScriptExited,
    ScriptNotFoundError,
    ScriptRun,
    ScriptTimeout,
    StopScript,
    __all__,  # noqa: F401
    check_script,
    run_script,
)

warnings.warn("vizgrad.debug.capture is vizgrad.debug.script_run now (running a script is "
              "not capturing); import that", DeprecationWarning, stacklevel=2)
