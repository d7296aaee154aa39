"""What the tool's code reads from a text, kept in the user cache by that text.

A result that depends only on a text and on the code that reads it (a validated
built-in manifest, the shipped snapshot, what a pip configuration file says, the wheel
tags of a described machine: its text the arguments they are listed from) is kept
as plain data, ``<folder>/<name>.json``, under a key of the text's sha256 and of that
code: the tool's version and its own files (their count, size and newest time, as the
plan store keys them: a checkout edited in place reads its texts again), Python's
version, and whatever else the caller's reading depends on (packaging's version, for
its parsers). A later process makes the result again from the data, without reading
the text again. A text holding a URL with credentials is never kept: reading it hands
them to the index client, and a cache file must not hold them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from resolver_hook import __version__
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.record import sha256_hex
from resolver_hook.ground.userinfo import has_credentials

__all__ = ["KeptAnswers", "code_key", "kept"]

_FORMAT = 1
_T = TypeVar("_T")


def kept(
    folder_name: str,
    file_name: str,
    text: str | bytes,
    *,
    make: Callable[[], _T],
    dump: Callable[[_T], dict[str, Any]],
    rebuild: Callable[[dict[str, Any]], _T],
    code: Sequence[Any] = (),
) -> _T:
    """``make()``, what the code reads from ``text``, or ``rebuild`` of the plain data
    ``dump`` wrote of it for the same text and code (``code``: what the reading depends
    on besides the tool and Python), kept as ``<folder_name>/<file_name>.json``.
    ``make`` may raise (a text that is not one): nothing is kept then, and it raises
    again for that text the next time; an entry ``rebuild`` refuses (a lookup, type or
    value error) is made again and replaced. ``text`` may be the bytes read (UTF-8), so
    a result kept is found without decoding them."""
    folder = _cache.cache_dir(os.environ)
    if folder is None:
        return make()
    path = os.path.join(folder, folder_name, f"{file_name}.json")
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    key = {"format": _FORMAT, "sha256": sha256_hex(data), "code": code_key(code)}
    found, _ = _cache.read(path, key)
    if isinstance(found, dict):
        try:
            return rebuild(found)
        except (LookupError, TypeError, ValueError, AttributeError):
            pass  # not ours after all: made again, and written anew
    made = make()
    shown = text if isinstance(text, str) else text.decode("utf-8", "surrogateescape")
    if not has_credentials(shown):  # so a text kept never held any
        with contextlib.suppress(TypeError, ValueError):  # a value JSON cannot hold
            _cache.write(path, key, dump(made))
    return made


class KeptAnswers:
    """Short answers of the code to questions asked by their text (the tag pairs a
    Python accepts, which rows a release range holds), kept in one table in the user
    cache, ``<folder_name>/<file_name>.json``, keyed by the code (as :func:`kept`'s:
    the tool, Python, and ``code``): the many small answers of a plan read from one
    file, where :func:`kept` would read one for each. The table is read once a process
    (per cache folder); the answers found anew are added (:meth:`add`) and written with
    it at once (:meth:`keep`). The file is plain data: a caller checks each answer it
    gets, and finds again (and adds) one it cannot use. A table grown past the bound of
    a cache file (``MAX_BYTES``) is not read, and starts anew."""

    def __init__(self, folder_name: str, file_name: str, *, code: Sequence[Any] = ()) -> None:
        self._names = (folder_name, f"{file_name}.json")
        self._code = list(code)
        self._tables: dict[str, _Table] = {}  # by cache folder

    def get(self, question: str) -> Any:
        """The answer kept for ``question``; None when there is none."""
        table = self._table()
        return table.answers.get(question) if table is not None else None

    def add(self, question: str, answer: Any) -> None:
        """Keep ``answer`` (plain data) for ``question``, written by :meth:`keep`."""
        table = self._table()
        if table is not None:
            table.answers[question] = answer
            table.added = True

    def keep(self) -> None:
        """Write the table with the answers added since it was read, if any, atomically
        (a write that fails, or loses to another process's, only finds them again)."""
        folder = _cache.cache_dir(os.environ)
        table = self._tables.get(folder) if folder is not None else None
        if folder is not None and table is not None and table.added:
            _cache.write(os.path.join(folder, *self._names), self._key(), table.answers)
            table.added = False

    def _table(self) -> _Table | None:
        folder = _cache.cache_dir(os.environ)
        if folder is None:
            return None
        table = self._tables.get(folder)
        if table is None:
            found, _ = _cache.read(os.path.join(folder, *self._names), self._key())
            table = self._tables[folder] = _Table(found if isinstance(found, dict) else {})
        return table

    def _key(self) -> dict[str, Any]:
        return {"format": _FORMAT, "code": code_key(self._code)}


class _Table:
    __slots__ = ("added", "answers")

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.added = False


def code_key(code: Sequence[Any] = ()) -> list[Any]:
    """What a result kept by :func:`kept` is keyed by besides its text: the tool, Python,
    and ``code`` (for another kind of result kept by the same code)."""
    return [*_code(), *code]


@functools.cache
def _code() -> list[Any]:
    """The code every reading depends on: the tool (its version and files, taken once:
    the code of a process is the code it loaded) and Python."""
    return [__version__, _cache.tool_files(), list(sys.version_info[:2])]
