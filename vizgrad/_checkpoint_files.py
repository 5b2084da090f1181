"""File handling behind ``vizgrad.save`` / ``vizgrad.load``: size-checked reading of
``.npz`` members, and the temporary files of atomic saves (created with the umask's
permissions, stale ones of killed saves cleaned up). See serialization.py for the rules.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import socket
import stat
import struct
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

# Errors a malformed zip or .npy member can raise while being read (not OSError: a
# failing disk is not a malformed file).
_MALFORMED = (zipfile.BadZipFile, zlib.error, ValueError, EOFError, struct.error,
              OverflowError, NotImplementedError, RuntimeError)
_CHUNK = 1 << 20  # read members 1 MiB at a time, straight into the array's buffer
_METHODS = {zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
            zipfile.ZIP_LZMA: "lzma"}


@contextmanager
def open_archive(where: str, error: type[Exception]) -> Iterator[zipfile.ZipFile]:
    """Open ``where`` as a zip archive, or raise ``error`` saying what the file is instead."""
    with open(where, "rb") as raw:
        head = raw.read(6)
        if head == b"\x93NUMPY":
            raise error(f"{where}: this is a single NumPy array (.npy), not a checkpoint "
                        "(.npz); read it with numpy.load(path, allow_pickle=False)")
        raw.seek(0)
        try:
            archive = zipfile.ZipFile(raw)
        except _MALFORMED:
            hint = " (it looks like a pickle, which vizgrad never loads)" \
                if head[:1] == b"\x80" else ""
            raise error(f"{where}: not a checkpoint: the file is not a .npz (zip) "
                        f"archive{hint}") from None
        with archive:
            yield archive


class MemberReader:
    """Reads ``.npy`` members of an archive after checking their declared sizes.

    ``check_sizes`` looks at the zip directory, then at each member's ``.npy`` header
    (only its first bytes are decompressed), and refuses before anything is read when
    the arrays together would exceed ``max_bytes``.
    """

    def __init__(self, archive: zipfile.ZipFile, where: str, max_bytes: int | None,
                 error: type[Exception]) -> None:
        if max_bytes is not None and (not isinstance(max_bytes, int) or max_bytes < 0):
            raise ValueError(f"max_bytes must be a non-negative int or None, got {max_bytes!r}")
        self.archive, self.where, self.max_bytes, self.error = archive, where, max_bytes, error
        self.total = 0
        self.headers: dict[str, tuple] = {}
        try:
            self.file_size: int | None = os.fstat(archive.fp.fileno()).st_size  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            self.file_size = None

    def _refuse(self, total: int, detail: str) -> Exception:
        return self.error(
            f"{self.where}: loading it would take {_size(total)} of memory ({detail}), more "
            f"than max_bytes={self.max_bytes} ({_size(self.max_bytes or 0)}). If you trust "
            "this file, pass a larger max_bytes= to vizgrad.load (None: no limit).")

    def check_sizes(self, keys: Iterable[str]) -> None:
        new = [key for key in dict.fromkeys(keys) if key not in self.headers]
        infos = [self.archive.getinfo(key + ".npy") for key in new]
        if self.max_bytes is not None:
            declared = self.total + sum(info.file_size for info in infos)
            if declared > self.max_bytes:
                raise self._refuse(declared, "as declared by the zip directory")
        total = self.total
        for key, info in zip(new, infos):
            shape, fortran, dtype, offset, nbytes = header = self._header(key, info)
            total += nbytes
            if self.max_bytes is not None and total > self.max_bytes:
                raise self._refuse(total, f"entry {key!r} declares a {dtype} array of "
                                          f"shape {shape}")
            if offset + nbytes > info.file_size:
                raise self.error(f"{self.where}: entry {key!r} is truncated: its header "
                                 f"declares {nbytes} bytes of data, the file holds "
                                 f"{max(info.file_size - offset, 0)}")
            if self.max_bytes is not None:
                self._check_stored(key, info)
            self.headers[key] = header
        self.total = total

    def _check_stored(self, key: str, info: zipfile.ZipInfo) -> None:
        """Refuse a member that declares more bytes than the file stores for it.

        ``vizgrad.save`` never compresses, so every member it writes holds its bytes
        as they are: stored, its size in the zip directory equal to its size in the
        file, and inside the file.  Anything else (a compressed member above all) can
        make a small file declare gigabytes, which ``max_bytes`` alone would allow up to
        its limit: refused before anything is allocated, unless ``max_bytes=None``
        says the file is trusted."""
        trust = ("If you trust this file, load it with max_bytes=None (no limit); "
                 "vizgrad.save never compresses.")
        if info.compress_type != zipfile.ZIP_STORED:
            method = _METHODS.get(info.compress_type, f"method {info.compress_type}")
            raise self.error(
                f"{self.where}: entry {key!r} is compressed ({method}, {info.compress_size} "
                f"bytes in the file for {info.file_size} declared), so this is not a file "
                f"vizgrad.save wrote, and its declared size is not checked by the file's "
                f"size. {trust}")
        room = info.compress_size if self.file_size is None \
            else min(info.compress_size, max(self.file_size - info.header_offset, 0))
        if info.compress_size != info.file_size or room < info.compress_size:
            raise self.error(
                f"{self.where}: entry {key!r} declares {info.file_size} bytes but the file "
                f"stores at most {room} for it (a damaged or forged archive). {trust}")

    def _header(self, key: str, info: zipfile.ZipInfo) -> tuple:
        try:
            with self.archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise ValueError(f".npy format version {version} is not supported")
                offset = member.tell()
        except _MALFORMED as problem:
            raise self.error(f"{self.where}: entry {key!r} is not a valid NumPy array "
                             f"({problem})") from None
        if dtype.hasobject:
            raise self.error(f"{self.where}: entry {key!r} holds Python objects (a pickle), "
                             "which vizgrad never loads")
        if any(dim < 0 for dim in shape):
            raise self.error(f"{self.where}: entry {key!r} declares a negative shape {shape}")
        return shape, fortran, dtype, offset, math.prod(shape) * dtype.itemsize

    def read(self, key: str) -> np.ndarray:
        """The array of member ``key + ".npy"`` (its size is checked first if it wasn't)."""
        self.check_sizes([key])
        shape, fortran, dtype, offset, nbytes = self.headers[key]
        buffer = np.empty(nbytes, dtype=np.uint8)
        view = memoryview(buffer)
        done = 0
        try:
            with self.archive.open(key + ".npy") as member:
                member.read(offset)
                while done < nbytes:
                    count = member.readinto(view[done:done + _CHUNK])
                    if not count:
                        break
                    done += count
        except _MALFORMED as problem:
            raise self.error(f"{self.where}: entry {key!r} cannot be read ({problem})") \
                from None
        if done < nbytes:
            raise self.error(f"{self.where}: entry {key!r} is truncated ({done} of {nbytes} "
                             "bytes)")
        if dtype.itemsize == 0:
            return np.empty(shape, dtype=dtype)
        return buffer.view(dtype).reshape(shape, order="F" if fortran else "C")


def _size(count: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return ""  # unreachable


# -- temporary files of atomic saves -----------------------------------------------------
# ``.vizgrad-<host>-<pid>-<random>.npz.tmp``: the host and PID say whose it is, so the next
# save can tell a killed save's leftover from a save still running. Older vizgrad made
# ``.vizgrad-<8 random>.npz.tmp`` (tempfile.mkstemp), which carries no owner.
_OURS = re.compile(r"\.vizgrad-([0-9a-f]{8})-([0-9]{1,10})-[0-9a-f]{8}\.npz\.tmp\Z")
_LEGACY = re.compile(r"\.vizgrad-[a-z0-9_]{8}\.npz\.tmp\Z")
STALE_AFTER = 3600.0  # seconds untouched before a temp file whose owner can't be checked goes


@functools.cache
def _host() -> str:
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def create_temporary(folder: str) -> tuple[int, str]:
    """A new temporary file in ``folder`` (mode 0o666 minus the umask, as ``open`` gives)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    while True:
        name = f".vizgrad-{_host()}-{os.getpid()}-{os.urandom(4).hex()}.npz.tmp"
        path = os.path.join(folder, name)
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue


def keep_mode(target: str, temporary: str) -> None:
    """Give ``temporary`` the mode of the file it will replace, as writing in place would."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return  # a new file: it keeps the umask's permissions from create_temporary
    os.chmod(temporary, mode)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of ours is saving
    try:
        os.kill(pid, 0)  # signal 0 only checks that the process exists
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):
        return True  # exists but isn't ours, or can't tell: keep the file
    return True


def remove_stale_temporaries(folder: str) -> list[str]:
    """Delete temp files of killed saves in ``folder``; returns the paths deleted.

    Only files named exactly as ``create_temporary`` (or older vizgrad) names them, only
    regular files, and only stale ones: their process on this host is gone, or (when the
    owner can't be checked: another host, an old name, Windows) untouched for an hour.
    """
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        ours = _OURS.match(entry.name)
        if ours is None and _LEGACY.match(entry.name) is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                continue
            if ours is not None and ours[1] == _host() and os.name == "posix":
                stale = not _alive(int(ours[2]))
            else:
                stale = now - info.st_mtime > STALE_AFTER
            if stale:
                os.remove(entry.path)
                removed.append(entry.path)
        except OSError:
            continue  # gone already, or not ours to delete
    return removed

