"""Writing a lock file: its missing parent folders first, then the file, atomically.

``-o 'locks/{target}.txt'`` names a folder that may not exist yet; the lock makes it
(and any above it) just before the first file goes in, after every check has passed,
so a refusal leaves nothing behind.
"""

from __future__ import annotations

import os

from resolver_hook._fs import write_atomic
from resolver_hook.errors import OperationalError

__all__ = ["write_lock"]


def write_lock(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically, making its missing parent folders."""
    folder = os.path.dirname(path)
    if folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise OperationalError(
                f"{path}: cannot write: cannot make the folder {folder}: {exc.strerror or exc}"
            ) from None
    write_atomic(path, text)  # an unwritable path is one error line (exit 1)
