"""What a command read, declared by the readers themselves: the inputs of a stored plan.

A plan is a function of the command's arguments and of the files its readers read.
Each reader that feeds a plan (requirement files and their includes, the manifests a
user gives, a ``pyproject.toml`` looked for, the page cache, a ``--profile``, the facts
of the venv installed into) is handed a :class:`Recorder` and declares every input it
read with a digest of what it saw, or its absence. A read whose answer no file holds (a
page from the network, a program started, detection's probes) marks the recorder
unstorable, with why. A page served from the page cache because it was fresh says until
when: the recorder keeps the earliest such time (:attr:`Recorder.until`).

A declaration is ``(path, how, digest)``, ``how`` one of ``["read", LIMIT]`` (the
sha256 of a file's first ``LIMIT`` bytes; a whole file of ``n`` bytes is declared with
``n + 1``, so one that grew is a change), ``["list"]`` (of a folder's sorted names) and
``["kind"]`` (1 a file, 2 a folder, 0 anything else); None where nothing is there.
:func:`current` takes the same observation again on a replay. What was seen is what
the run used: a file written a moment before needs no settling, and a venv made again
at the same path with the same files is the same input. Nothing of the planner is
imported here; every reader takes :data:`NOWHERE` (which keeps nothing) by default.
"""

from __future__ import annotations

import os
import stat
import sys
import time

# The interpreter's own sha256, where it has one: hashlib loads OpenSSL first, a few
# milliseconds of a replay's start for a hash of a few kilobytes. Its module is named
# by the version (_sha2 from 3.12, _sha256 before): a name the interpreter lacks costs
# a search of every folder of sys.path before its ImportError.
try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
    else:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
except ImportError:
    from hashlib import sha256  # type: ignore[assignment,unused-ignore]

# Up to this size, while hashlib is not loaded, :func:`sha256_hex` hashes with the
# interpreter's own sha256: OpenSSL's is faster (0.05 ms against 0.16 ms for torch's
# 45 kB manifest, the largest a plan hashes), but loading it takes 2-7 ms, what the
# interpreter's own needs for some 600 kB. A larger input (a whole page of a project
# of many releases) loads it, and from then on every input uses it.
_OWN_SHA256_MAX = 512 << 10

# typing is not imported at run time: this module is on the start-up path of a replay.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = [
    "MAX_READ",
    "NOWHERE",
    "UNREADABLE",
    "Recorder",
    "current",
    "digest",
    "file_bytes",
    "folder_names",
    "path_kind",
    "sha256",
    "sha256_hex",
    "unchanged",
]

# The most bytes one declaration covers: a reader of a larger file makes its run
# unstorable rather than have every replay hash it.
MAX_READ = 16 << 20

# What an observation that cannot be taken gives (a permission error, a file now a
# folder, a stored form of another version): equal to no digest, so a replay plans again.
UNREADABLE = "unreadable"


class Recorder:
    """The inputs one run declared, the time until which its pages stay fresh, and why
    it may not be stored (``refused``: None while it may)."""

    active = True

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = os.getcwd() if cwd is None else cwd
        self.inputs: dict[tuple[str, str], list[Any]] = {}
        self.until: float | None = None
        self.refused: str | None = None
        # What the tool started the installer with (an unchecked install's session);
        # declarations after it are the installer's part: done again on a replay.
        self.launch: dict[str, Any] | None = None
        # Called once that installer runs (:meth:`running`): what is kept of the run is
        # complete then, and keeping it costs no time the installer does not take anyway.
        self.when_running: Callable[[], None] | None = None

    def declare(self, path: str | os.PathLike[str], how: list[Any], seen: Any) -> None:
        """``path`` was observed ``how`` and gave ``seen`` (bytes, names, a kind or None):
        a reader that used only a file's first bytes (a page cache entry's header holds
        its body's sha256) declares ``["read", len(head)]``."""
        if self.launch is not None:
            return
        full = os.path.join(self.cwd, os.fspath(path))
        kept = digest(how, seen)
        if kept == UNREADABLE:
            self.refuse(f"{full}: read in no form a replay takes again")
            return
        self._keep(full, how, kept)

    def file(self, path: str | os.PathLike[str], data: bytes | None) -> None:
        """A reader read the whole file ``path`` (``data``; None: there is none). A pipe,
        a device or a file too large to hash again is no input a replay can check."""
        if data is not None and len(data) >= MAX_READ:
            self.refuse(f"{os.fspath(path)}: too large to check again")
        elif data is not None and path_kind(os.fspath(path)) != 1:
            self.refuse(f"{os.fspath(path)}: not a plain file")
        else:
            self.declare(path, ["read", MAX_READ if data is None else len(data) + 1], data)

    def fresh_until(self, seconds: float) -> None:
        """A page served from the cache stays fresh until ``seconds`` (since the epoch)."""
        self.until = seconds if self.until is None else min(self.until, seconds)

    def take(self, inputs: Iterable[list[Any]], until: float | None) -> None:
        """Declarations another recorder kept (``[path, how, digest]`` each, its path
        full), and the time its pages stay fresh until, as if declared here."""
        if self.launch is not None:
            return
        for full, how, kept in inputs:
            self._keep(full, how, kept)
        if until is not None:
            self.fresh_until(until)

    def _keep(self, full: str, how: list[Any], kept: str | int | None) -> None:
        """The observation of ``full`` kept (``kept``: its digest); one seen otherwise
        before in this run makes it unstorable."""
        earlier = self.inputs.setdefault((full, repr(how)), [full, how, kept])
        if earlier[2] != kept:
            self.refuse(f"{full} changed during the run")

    def refuse(self, why: str) -> None:
        """The run read what no file holds (``why``): it is not stored."""
        if self.refused is None and self.launch is None:
            self.refused = why

    def launched(self, launch: dict[str, Any]) -> None:
        """The session starts the installer now, with ``launch``; the first one counts."""
        if self.launch is None:
            self.launch = launch

    def running(self) -> None:
        """The installer of the declared launch runs now: :attr:`when_running`, once."""
        if self.launch is not None and self.when_running is not None:
            then, self.when_running = self.when_running, None
            then()


class _Nowhere(Recorder):
    """The recorder of a run that is not stored: every declaration dropped."""

    active = False

    def __init__(self) -> None:
        super().__init__(cwd="")  # nothing is kept: no folder to read

    def declare(self, path: str | os.PathLike[str], how: list[Any], seen: Any) -> None:
        return None

    def file(self, path: str | os.PathLike[str], data: bytes | None) -> None:
        return None  # not even the look at what kind of file it is

    def fresh_until(self, seconds: float) -> None:
        return None

    def take(self, inputs: Iterable[list[Any]], until: float | None) -> None:
        return None

    def refuse(self, why: str) -> None:
        return None

    def launched(self, launch: dict[str, Any]) -> None:
        return None


NOWHERE: Recorder = _Nowhere()


# --- readers that declare what they read ---------------------------------------------


def file_bytes(path: str, limit: int, record: Recorder = NOWHERE) -> bytes | None:
    """The first ``limit`` bytes of the file ``path``; None where there is no such file
    (nothing there, or a parent that is no folder). OSError for any other failure."""
    try:
        data = _read(path, limit)
    except OSError:
        record.refuse(f"{path}: cannot read")
        raise
    record.declare(path, ["read", limit], data)
    return data


def folder_names(path: str, record: Recorder = NOWHERE) -> list[str] | None:
    """The sorted names in the folder ``path``; None where there is no such folder.
    OSError for any other failure."""
    try:
        names = _list(path)
    except OSError:
        record.refuse(f"{path}: cannot list")
        raise
    record.declare(path, ["list"], names)
    return names


def path_kind(path: str, record: Recorder = NOWHERE) -> int | None:
    """1 for a file, 2 for a folder (links followed), 0 for anything else, None where
    nothing is there."""
    kind = _kind(path)
    record.declare(path, ["kind"], kind)
    return kind


# --- digests -------------------------------------------------------------------------


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data``, in hex: by the interpreter's own sha256 for a small input
    while OpenSSL's is not loaded, else by OpenSSL's (:data:`_OWN_SHA256_MAX`)."""
    if len(data) <= _OWN_SHA256_MAX and "hashlib" not in sys.modules:
        return str(sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


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
    elif not (form == "read" and isinstance(seen, bytes) and len(seen) <= how[1]):
        return UNREADABLE
    return str(sha256(seen).hexdigest())


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


def unchanged(inputs: Any, until: Any) -> bool:
    """Whether a store's record still holds: the time its pages stay fresh ``until``
    (None: no page was served as fresh) has not passed, and its ``inputs``, its ``[path,
    how, digest]`` declarations, each give the same digest again (both as read back
    from its file: any other shape is refused)."""
    if until is not None and not (isinstance(until, (int, float)) and time.time() < until):
        return False
    if not isinstance(inputs, list):
        return False
    for item in inputs:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)):
            return False
        if item[2] == UNREADABLE or current(item[1], item[0]) != item[2]:
            return False
    return True


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


# Without blocking: a FIFO in a file's place is refused at once, never waited on.
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
