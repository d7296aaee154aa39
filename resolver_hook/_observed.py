"""Reads that tell a watching plan store what they saw, so that a stored plan is checked
against what was read rather than against a file's identity.

A stored plan (:mod:`resolver_hook._plancache`) holds every file its run read by type,
size, inode and change times, and a run that read a file changed in the two seconds
before it is not stored at all. That is right for a file read in passing, but too
strict for the few facts of a virtual environment an install plans with (its
``pyvenv.cfg``, its pip's version, whether its interpreter is there): a venv removed and
made again at the same path has new inodes and new times and the same facts, and a venv
made just before the install (as CI does) is always "changed just now". The readers of
those facts go through this module instead. Each read raises :data:`EVENT` with what it
saw, and the store keeps a digest of that (the bytes' sha256, the names' sha256, the
kind) in place of the file's identity; a replay takes the same observation again with
:func:`current` and compares. What was seen is what the run used, so a file written a
moment before the run needs no settling: the digest is of the bytes the plan was made
from.

What a read here does to the path (its open, stat or listing) is not kept by the
path's identity; anything else in the run that touches the same path is, as usual.
"""

from __future__ import annotations

import os
import stat
import sys

# The interpreter's own sha256, where it has one: hashlib loads OpenSSL first, a few
# milliseconds of a replay's start for a hash of a few kilobytes.
try:
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # >= 3.12
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment,unused-ignore]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BEGIN_EVENT",
    "EVENT",
    "MAX_READ",
    "UNREADABLE",
    "current",
    "digest",
    "file_bytes",
    "folder_names",
    "path_kind",
    "sha256",
    "unchanged",
]

# Raised with (path,) before a path is read, and with (path, how, what was seen) after:
# watched by resolver_hook._plancache, which keeps what the read itself did out of the
# path's identity (whatever else touches the path in that run is still kept by it).
BEGIN_EVENT = "resolver_hook.observing"
EVENT = "resolver_hook.observed"

# The most bytes one observation reads (the readers take 64 KiB): a stored record is
# private, and still names no read larger than this.
MAX_READ = 1 << 20

# Where a path cannot be observed as it was (a permission error, a file now a folder):
# never taken as unchanged (:func:`unchanged`), so a replay plans again.
UNREADABLE = "unreadable"


def file_bytes(path: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of the file ``path``; None where there is no such file
    (nothing there, or a parent that is no folder). OSError for any other failure."""
    data: bytes | None = _observe(path, ["read", limit], lambda: _read(path, limit))
    return data


def folder_names(path: str) -> list[str] | None:
    """The sorted names in the folder ``path``; None where there is no such folder.
    OSError for any other failure."""
    names: list[str] | None = _observe(path, ["list"], lambda: _list(path))
    return names


def path_kind(path: str) -> int | None:
    """1 for a file, 2 for a folder (links followed), 0 for anything else, None where
    nothing is there."""
    kind: int | None = _observe(path, ["kind"], lambda: _kind(path))
    return kind


# What a read that failed (an OSError) saw: no digest, so the run is not stored.
_FAILED = object()


def _observe(path: str, how: list[Any], take: Any) -> Any:
    sys.audit(BEGIN_EVENT, path)
    seen = _FAILED
    try:
        seen = take()
    finally:
        sys.audit(EVENT, path, how, seen)
    return seen


def digest(how: Any, seen: Any) -> str | int | None:
    """What a store keeps of an observation: the sha256 of the bytes or of the names, the
    kind as it is, None for nothing there (:data:`UNREADABLE` for what no reader here
    sees: a store keeps no such observation)."""
    form = _form(how)
    if form is None:
        return UNREADABLE
    if seen is None:
        return None
    if form == "kind" and isinstance(seen, int) and not isinstance(seen, bool):
        return seen
    if form == "list" and isinstance(seen, list) and all(isinstance(n, str) for n in seen):
        seen = "\0".join(seen).encode("utf-8", "surrogateescape")
    elif not (form == "read" and isinstance(seen, bytes)):
        return UNREADABLE
    return str(sha256(seen).hexdigest())


def unchanged(how: Any, path: str, kept: Any) -> bool:
    """Whether the observation ``how`` of ``path``, taken now, has the digest ``kept``."""
    return bool(kept != UNREADABLE and current(how, path) == kept)


def current(how: Any, path: str) -> str | int | None:
    """The digest of the same observation taken now (:data:`UNREADABLE` where it cannot
    be taken, or ``how`` is of no known form)."""
    form = _form(how)
    try:
        if form == "read":
            return digest(how, _read(path, how[1]))
        if form == "list":
            return digest(how, _list(path))
        if form == "kind":
            return _kind(path)
    except (OSError, ValueError):
        pass
    return UNREADABLE


def _form(how: Any) -> str | None:
    """``read`` for ``["read", LIMIT]``, ``list`` for ``["list"]``, ``kind`` for
    ``["kind"]``; None for anything else (a stored record of another version)."""
    if how in (["list"], ["kind"]):
        return str(how[0])
    if isinstance(how, list) and len(how) == 2 and how[0] == "read":
        limit = how[1]
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 <= limit <= MAX_READ:
            return "read"
    return None


# Without blocking: a FIFO in a venv's place is refused at once, never waited on.
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read(path: str, limit: int) -> bytes | None:
    try:
        fd = os.open(path, _FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    with open(fd, "rb", closefd=True) as f:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{path} is a folder")
        if not stat.S_ISREG(mode):
            raise OSError(f"{path} is not a regular file")
        return f.read(limit)


def _list(path: str) -> list[str] | None:
    try:
        return sorted(os.listdir(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def _kind(path: str) -> int | None:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return 1 if stat.S_ISREG(mode) else 2 if stat.S_ISDIR(mode) else 0
