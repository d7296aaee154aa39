"""The reader of one parsed TOML document: typed values out, problems with key paths in.

One :class:`TableReader` reads a document (a manifest, a lock set's index, an app-env
declaration); each :class:`Problem` names the key path (``index[2].cuda``) and what is
wrong there, shown as ``source: key.path: what``; a document's problems are raised
together as one :class:`ManifestError`, as packaging's ``InvalidMetadata`` values are
gathered into one ``ExceptionGroup``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from resolver_hook.errors import ManifestError
from resolver_hook.ground.credentials import keep
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.manifest.urls import url_problem

__all__ = ["ManifestError", "Problem", "TableReader", "kind_of"]

_V = TypeVar("_V")


@valueclass
class Problem:
    """One thing wrong in a document: its key path (``""``: the document) and what."""

    source: str
    path: str
    what: str

    def __str__(self) -> str:
        return (
            f"{self.source}: {self.path}: {self.what}"
            if self.path
            else f"{self.source}: {self.what}"
        )


class TableReader:
    """Collects problems as ``source: path: what`` while reading one document."""

    def __init__(self, source: str, allow_insecure: bool = False) -> None:
        self.source = source
        self.allow_insecure = allow_insecure
        self.found: list[Problem] = []
        self._shared: dict[object, object] = {}
        # Values read and found valid, by kind and text (or a list's texts): a manifest
        # repeats a few (``cuda = ">=13.0"`` on most of its entries, a kernel list on an
        # entry per page), and the manifests of one plan repeat each other's (torch's
        # kernel lists, CUDA ranges and dates in torchvision's): each parsed and checked
        # once in a process. What is kept depends on the text alone (a coupling's kind
        # names its package), or on the URL policy too: one table per policy.
        self.valid = _VALID[bool(allow_insecure)]

    @property
    def problems(self) -> list[str]:
        """Each problem found so far, as it is shown."""
        return [str(p) for p in self.found]

    def shared(self, value: _V) -> _V:
        """One object for equal values (tag sets, specifiers, kernel lists) of a document.

        A manifest of 100,000 wheels has a handful of distinct tag sets: sharing them
        keeps memory, and the garbage collector's work, proportional to what differs.
        """
        return cast(_V, self._shared.setdefault(value, value))

    def bad(self, path: str, what: str) -> None:
        self.found.append(Problem(source=self.source, path=path, what=what))

    def include(self, error: ManifestError, path: str) -> None:
        """The problems of a document read at ``path`` inside this one by its own reader
        (whose source was ``"<this source>: <path>"``), as problems of this one."""
        inner = f"{self.source}: {path}: "
        for text in error.problems:
            self.bad(path, text.removeprefix(inner))

    def keys(self, table: Mapping[str, Any], allowed: Sequence[str], path: str) -> None:
        for key in table:
            if key not in allowed:
                self.unknown(path, str(key), allowed)

    def unknown(self, path: str, key: str, allowed: Sequence[str]) -> None:
        """``key`` in the table at ``path`` is none of ``allowed``: the nearest, or the list."""
        import difflib  # an unknown key only: every plan loads this module

        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(allowed)})"
        self.bad(_join(path, key), f"unknown key{hint}")

    def table(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.bad(path, f"expected a table, got {kind_of(value)}")
        return None

    def tables(self, doc: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
        value = doc.get(key, [])
        if isinstance(value, Mapping):
            value = [value]  # [wheel] written once instead of [[wheel]]
        if not isinstance(value, list):
            self.bad(key, f"expected an array of tables ([[{key}]]), got {kind_of(value)}")
            return []
        out = []
        for i, item in enumerate(value):
            t = self.table(item, f"{key}[{i}]")
            if t is not None:
                out.append(t)
        return out

    def string(
        self, table: Mapping[str, Any], key: str, path: str, *, required: bool = False
    ) -> str | None:
        if key not in table:
            if required:
                self.bad(_join(path, key), "missing")
            return None
        value = table[key]
        if not isinstance(value, str):
            self.bad(_join(path, key), f"expected a string, got {kind_of(value)}")
            return None
        if required and not value.strip():
            self.bad(_join(path, key), "empty")
            return None
        return value

    def boolean(self, table: Mapping[str, Any], key: str, path: str) -> bool | None:
        """``key = true`` or ``false``; None when absent or not a boolean (said)."""
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, bool):
            self.bad(_join(path, key), f"expected true or false, got {kind_of(value)}")
            return None
        return value

    def strings(self, table: Mapping[str, Any], key: str, path: str) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.bad(_join(path, key), f"expected a list of strings, got {kind_of(value)}")
            return None
        ok = True
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.bad(f"{_join(path, key)}[{i}]", f"expected a string, got {kind_of(item)}")
                ok = False
        return tuple(value) if ok else None

    def url_string(self, t: Mapping[str, Any], path: str, *, required: bool = False) -> str | None:
        """``t["url"]`` without its credentials: they are kept for the index client,
        which alone sends them (resolver_hook.ground.credentials); nothing the manifest's
        flavours print, lock or cache holds them."""
        url = self.string(t, "url", path, required=required)
        return None if url is None else keep(url)

    def url(self, url: str, path: str) -> bool:
        """Whether ``url`` passes the URL policy (the problem said at ``path`` when not);
        a URL the document repeats (an index page, an entry per release) is checked once."""
        if self.valid.get(("url", url)) is not None:
            return True
        problem = url_problem(url, allow_insecure=self.allow_insecure)
        if problem:
            self.bad(path, problem)
            return False
        self.valid["url", url] = url
        return True


_VALID: dict[bool, dict[tuple[str, str | tuple[str, ...]], object]] = {False: {}, True: {}}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def kind_of(value: Any) -> str:
    """A TOML value's type as a problem says it: ``an integer``, ``a table``."""
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)
