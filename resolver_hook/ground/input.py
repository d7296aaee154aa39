"""The one input opener: a file or pipe the user named, read with bounds.

:func:`read_input` opens a file the user named (``--profile``, ``--manifest``, ``-r``
and its includes, a page for ``manifest import``): folders and devices are refused at
open; FIFOs and ``<(...)`` pipes work, read with a size cap and a total deadline, so a
FIFO nobody writes to is an error after a few seconds, never a hang.
:func:`check_archive_input` does the same checks for wheels and sdists (``scan``,
``lint``), which are read by seeking: a pipe there is refused with one error line.
"""

from __future__ import annotations

import codecs
import os
import select
import stat
import time

from resolver_hook.errors import UsageError
from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.limits import INPUT_DEADLINE, MAX_INPUT_BYTES

__all__ = ["INPUT_DEADLINE", "InputError", "check_archive_input", "read_input", "read_text_input"]


class InputError(UsageError):
    """An input that cannot be read: ``problem`` in words; ``opening`` when open() failed
    (no such file, permission), so a caller can word it as pip does."""

    def __init__(self, shown: str, problem: str, *, opening: bool = False, hint: str | None = None):
        super().__init__(f"{shown}: {problem}", hint=hint)
        self.problem = problem
        self.opening = opening


def read_input(
    path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    deadline: float | None = None,
    what: str = "",
    record: Recorder = NOWHERE,
) -> bytes:
    """The bytes of a file or pipe the user named. UsageError naming the path otherwise.
    A file read is declared to ``record`` (a pipe's bytes no file holds: it refuses).

    ``what`` prefixes the path in messages (``"--profile "``). Folders, devices and
    sockets are refused at open; a regular file larger than ``limit`` is refused
    before reading; a pipe is read until its writer closes it, at most ``limit``
    bytes and ``deadline`` seconds in all (defaults: :data:`~resolver_hook.limits.MAX_INPUT_BYTES`,
    :data:`INPUT_DEADLINE`, read when called).
    """
    limit = MAX_INPUT_BYTES if limit is None else limit
    deadline = INPUT_DEADLINE if deadline is None else deadline
    shown = f"{what}{os.fspath(path)}"
    if os.fspath(path) == "":
        raise InputError(f"{what}''", "an empty path is not a file name", opening=True)
    try:
        # O_NONBLOCK: opening a FIFO that has no writer returns at once instead of
        # waiting for one; the read below waits, with the deadline.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except ValueError:  # "embedded null byte"
        raise InputError(
            f"{what}{os.fspath(path)!r}", "a file name cannot hold a NUL byte", opening=True
        ) from None
    except OSError as exc:
        raise InputError(shown, f"cannot read: {exc.strerror or exc}", opening=True) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(shown, "is a folder, not a file")
        if stat.S_ISREG(info.st_mode):
            if info.st_size > limit:
                raise InputError(shown, f"larger than {limit} bytes")
            data = _read_file(fd, shown, limit)
            record.file(path, data)
            return data
        if stat.S_ISFIFO(info.st_mode):
            record.refuse(f"{shown}: a pipe")
            return _read_pipe(fd, shown, limit, deadline)
        device = stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
        raise InputError(shown, f"is {'a device' if device else 'a socket'}, not a file")
    finally:
        os.close(fd)


def _read_file(fd: int, shown: str, limit: int) -> bytes:
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > limit:  # it grew while we read it
                raise InputError(shown, f"larger than {limit} bytes")
            chunks.append(chunk)
    except OSError as exc:
        raise InputError(shown, f"cannot read: {exc.strerror or exc}") from None
    return b"".join(chunks)


def _read_pipe(fd: int, shown: str, limit: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    end = time.monotonic() + deadline
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise InputError(
                shown,
                f"a pipe that did not finish within {deadline:g} s",
                hint="is anything writing to it?",
            )
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            continue
        except OSError as exc:
            raise InputError(shown, f"cannot read: {exc.strerror or exc}") from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise InputError(shown, f"more than {limit} bytes")
        chunks.append(chunk)


def check_archive_input(path: str | os.PathLike[str], *, what: str = "") -> None:
    """Refuse what a reader of archives (wheels, sdists: read by seeking) cannot read.

    Folders, devices and pipes are an :class:`InputError` naming the path; a path that
    does not exist is left to the reader, which says so in its own words.
    """
    shown = f"{what}{os.fspath(path)}"
    try:
        info = os.stat(path)  # never blocks, not even on a FIFO
    except OSError:
        return
    if stat.S_ISREG(info.st_mode):
        return
    if stat.S_ISDIR(info.st_mode):
        raise InputError(shown, "is a folder, not a file")
    if stat.S_ISFIFO(info.st_mode):
        raise InputError(
            shown,
            "is a pipe: wheels and sdists are read by seeking in them",
            hint="save it to a file first",
        )
    device = stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
    raise InputError(shown, f"is {'a device' if device else 'a socket'}, not a file")


def read_text_input(
    path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    what: str = "",
    record: Recorder = NOWHERE,
) -> str:
    """:func:`read_input` decoded as UTF-8 (a leading BOM dropped, as pip does)."""
    data = read_input(path, limit=limit, what=what, record=record)
    try:  # as the utf-8-sig codec decodes, without importing it (encodings.utf_8_sig)
        return data.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what}{os.fspath(path)}", "not UTF-8 text") from None
