"""Writing a lock file (its missing parent folders first, then the file, atomically), or,
for ``lock --check``, saying how the file on disk differs from what would be written.

``-o 'locks/{target}.txt'`` names a folder that may not exist yet; the lock makes it
(and any above it) just before the first file goes in, after every check has passed,
so a refusal leaves nothing behind. ``--check`` writes nothing: CI runs it to ask "is
this lock still what lock would write?".
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from pathlib import Path

from resolver_hook.errors import OperationalError
from resolver_hook.ground.fs import write_all, write_atomic
from resolver_hook.ground.input import InputError, read_text_input

__all__ = ["DIFF_LINES", "lock_diff", "lock_diffs", "write_locks"]

DIFF_LINES = 20  # of a --check diff: enough to see what moved, short enough for a CI log
_MAX_LOCK_BYTES = 64 << 20  # the largest lock files are a few MB; a bound, not a guess


def _make_folder(path: str | Path) -> None:
    folder = os.path.dirname(path)
    if folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise OperationalError(
                f"{path}: cannot write: cannot make the folder {folder}: {exc.strerror or exc}"
            ) from None


def write_locks(files: Sequence[tuple[str | Path, str]]) -> None:
    """Write lock files, their missing parent folders made first: one file atomically,
    several all or nothing (:func:`resolver_hook.ground.fs.write_all`)."""
    for path, _ in files:
        _make_folder(path)
    if len(files) == 1:
        write_atomic(str(files[0][0]), files[0][1])  # an unwritable path is one error line (exit 1)
    else:
        write_all(list(files))


def lock_diffs(files: Sequence[tuple[str | Path, str]], *, index: bool = False) -> list[str | None]:
    """:func:`lock_diff` of each file, in order. ``index``: the last file is the lock
    set's index.toml, which names the others' sha256: it is compared only when they are
    unchanged (else its difference says nothing more)."""
    diffs = [lock_diff(str(path), text) for path, text in files[:-1] if index]
    if index and any(diffs):
        return [*diffs, None]
    return diffs + [lock_diff(str(path), text) for path, text in files[len(diffs) :]]


def lock_diff(path: str, text: str) -> str | None:
    """None when the file at ``path`` holds ``text``; else a short unified diff (the
    file missing or unreadable: one line saying so)."""
    try:
        old = read_text_input(path, limit=_MAX_LOCK_BYTES)
    except (InputError, OSError) as exc:
        return f"{path}: would be written (now: {exc})\n"
    if old == text:
        return None
    diff = list(
        difflib.unified_diff(
            old.splitlines(), text.splitlines(), f"{path} (on disk)", f"{path} (lock now)",
            lineterm="", n=0,
        )
    )  # fmt: skip
    shown = diff[: DIFF_LINES + 2]
    more = len(diff) - len(shown)
    return "\n".join(shown) + (f"\n... {more} more lines" if more > 0 else "") + "\n"
