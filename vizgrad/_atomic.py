"""The last step every atomic writer of vizgrad shares: a complete temporary file beside
the target is renamed over it (``vizgrad.save``, ``render.save`` and ``write_atomic``,
``write_new``).

The temporary file's name is an implementation detail, so an error about it is told
about the user's target: ``cannot write out.svg: it is a folder``, not ``Is a
directory: '.out.svg.k3j9.tmp' -> 'out.svg'``; and the temporary file never stays
behind.

Example
-------
>>> import os
>>> os.mkdir("plots")
>>> check_target("plots")          # an existing folder
Traceback (most recent call last):
IsADirectoryError: [Errno 21] cannot write plots: it is a folder; give a file name (plots/NAME)
"""

from __future__ import annotations

import errno
import os
from typing import Any


def check_target(path: Any) -> None:
    """Refuse, before anything is written, a target that is a folder (a link to a folder
    is not: the rename replaces the link)."""
    if os.path.isdir(path) and not os.path.islink(path):
        raise folder_error(path)


def folder_error(path: Any) -> IsADirectoryError:
    name = os.fspath(path)
    return IsADirectoryError(errno.EISDIR, f"cannot write {name}: it is a folder; give a "
                             f"file name ({os.path.join(name, 'NAME')})")


def target_error(path: Any, error: OSError) -> OSError:
    """``error``, raised while making or renaming the temporary file, said about ``path``."""
    if isinstance(error, IsADirectoryError) or (
            os.path.isdir(path) and not os.path.islink(path)):
        return folder_error(path)
    name = os.fspath(path)
    reason = error.strerror or str(error)
    return type(error)(error.errno, f"cannot write {name}: {reason}")


def discard(temporary: str) -> None:
    """Remove a temporary file if it is still there (a failed write leaves nothing)."""
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass


def replace(temporary: str, path: Any) -> None:
    """Rename the complete ``temporary`` over ``path``; on any failure the temporary file
    is removed, and an ``OSError`` names ``path``."""
    try:
        os.replace(temporary, path)
    except OSError as error:
        discard(temporary)
        raise target_error(path, error) from None
    except BaseException:
        discard(temporary)
        raise
