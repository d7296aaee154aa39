"""The private temporary folder of a session, removed on exit, on error, on Ctrl-C and on
SIGTERM, and the files written into it.

Kept apart from :mod:`resolver_hook.ground.fs` (and its ``pathlib``): a replayed install
(:mod:`resolver_hook.install.launch`) makes its folder here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

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
    path = tempfile.mkdtemp(prefix="resolver-hook-")
    with sigterm_raises():
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)


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
