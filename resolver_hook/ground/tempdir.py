"""The private temporary folder of a session, removed on exit, on error, on Ctrl-C and on
SIGTERM, and the files written into it.

Kept apart from :mod:`resolver_hook.ground.fs` (and its ``pathlib``): a replayed install
(:mod:`resolver_hook.install.launch`) makes its folder here.

The folder is made as :func:`tempfile.mkdtemp` makes it (:func:`_make`), and removed as
``shutil.rmtree`` removes it (:func:`_remove`), without importing either module where
tempfile is not imported already: tempfile imports shutil and random, shutil the
compression modules (zlib, bz2, lzma, two of them shared libraries), some 3 ms of every
install.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

from resolver_hook.ground.signals import sigterm_raises

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["private_folder", "write_new"]


@contextlib.contextmanager
def private_folder() -> Iterator[str]:
    """A private (0700) folder removed on exit, on error, on Ctrl-C and on SIGTERM.

    SIGTERM outside an installer run raises :class:`~resolver_hook.ground.signals.Interrupted`
    (exit 143); during one, :func:`resolver_hook.process.foreground.foreground` forwards it
    first.
    """
    path = _make("resolver-hook-")
    with sigterm_raises():
        try:
            yield path
        finally:
            _remove(path)


# The characters of tempfile's random names.
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def _make(prefix: str) -> str:
    """``tempfile.mkdtemp(prefix=prefix)``: a new 0700 folder ``PREFIX`` + 8 random
    characters in the first of tempfile's candidates where one can be made (``TMPDIR``,
    ``TEMP``, ``TMP``, /tmp, /var/tmp, /usr/tmp, the current folder), its absolute path.
    Where tempfile is imported already (its ``tempfile.tempdir`` may be set), tempfile
    itself."""
    if "tempfile" in sys.modules or os.name == "nt":
        import tempfile

        return tempfile.mkdtemp(prefix=prefix)
    candidates = [d for d in (os.getenv(n) for n in ("TMPDIR", "TEMP", "TMP")) if d]
    candidates += ["/tmp", "/var/tmp", "/usr/tmp"]
    try:
        candidates.append(os.getcwd())
    except OSError:
        candidates.append(os.curdir)
    for folder in candidates:
        for _ in range(100):
            name = "".join(_NAME_CHARS[b % len(_NAME_CHARS)] for b in os.urandom(8))
            path = os.path.abspath(os.path.join(folder, prefix + name))
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            except OSError:
                break  # not writable (or gone): the next candidate, as tempfile goes on
            return path
    raise FileNotFoundError(errno.ENOENT, f"No usable temporary directory found in {candidates}")


def _remove(path: str) -> None:
    """Remove the folder ``path``, ignoring errors, as ``shutil.rmtree(path,
    ignore_errors=True)`` does: its files one by one (a link is removed, never followed),
    its folders after what they hold, then the folder itself. (uv's cache of a session
    is a tree of some sixty entries: shutil would be imported for it alone.)"""
    folders, todo = [], [path]
    while todo:
        folder = todo.pop()
        folders.append(folder)  # after the folder holding it: removed before that one
        try:
            with os.scandir(folder) as found:
                entries = list(found)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def write_new(folder: str, name: str, text: str) -> None:
    """Write ``text`` (UTF-8) to the new file ``name`` of a private folder just made: no
    one else can see the folder, so the file is made in place, owner-only (an existing
    file, or a name with a folder in it, is an error: never written through)."""
    if not name or os.sep in name or name in (".", ".."):
        raise ValueError(f"not a file name: {name!r}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(os.path.join(folder, name), flags, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8", "surrogateescape"))
