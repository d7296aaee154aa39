"""A built-in manifest validated once, kept as plain data by the sha256 of its text.

Validating the five built-in manifests of a five-package plan (some 275 entries) took
about 7 ms of every plan made anew, most of it in checks that find nothing in a text
they passed before. Validation is pure: its result depends on the manifest's text, the
source it is named by (the file's name), the URL policy (the built-in ones are read
under the strict one) and the code that reads it (the tool's rules; packaging's
parsers; Python's). :func:`kept_builtin` keeps that result in the user cache
(``manifests/<name>.json``) by :func:`resolver_hook.ground.contentcache.kept`, under a
key of all of these: the sha256 of the text, the tool's version and its own files (a
checkout edited in place is validated again), Python's version and packaging's
(:data:`CODE`). A text holding a URL with credentials is never kept: reading it hands
them to the index client.

The result is stored as one column per field, each value as the text it is made again
from by the constructor validation used (``Version``, ``SpecifierSet`` with its
specifiers in their order, ``Requirement``, the kernel targets, the dates, the tags),
each distinct text once in a table of its kind and the columns places in it; values of
equal text are made once in a process (validation shares them too). A field of a type
with no text form here fails the tests, and so does a value not made again equal.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from packaging import __version__ as _packaging_version
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.version import Version

from resolver_hook.ground.contentcache import kept
from resolver_hook.ground.valueclass import fields, from_columns
from resolver_hook.manifest.model import IndexFlavour, Manifest, Needs, WheelFlavour, requirement
from resolver_hook.portable.cuda import KernelTarget, parse_target

__all__ = ["CODE", "dump", "dump_all", "kept_builtin", "rebuild", "rebuild_all"]

#: What a reading by packaging's parsers depends on besides the tool and Python (the
#: built-in manifests' here, the shipped snapshot's): the ``code`` of what is kept.
CODE = (_packaging_version,)


def kept_builtin(file_name: str, text: str, validate: Callable[[], Manifest]) -> Manifest:
    """``validate()``, the manifest of the built-in file ``file_name`` holding ``text``,
    or the result kept from a validation of the same text by the same code."""
    return kept("manifests", file_name, text, make=validate, dump=dump, rebuild=rebuild, code=CODE)


def dump(manifest: Manifest) -> dict[str, Any]:
    """``manifest`` as plain data (:func:`rebuild` makes it again)."""
    return dump_all([manifest])


def rebuild(data: dict[str, Any]) -> Manifest:
    """The manifest :func:`dump` wrote, made again without validation."""
    (manifest,) = rebuild_all(data)
    return manifest


def dump_all(manifests: Sequence[Manifest]) -> dict[str, Any]:
    """``manifests`` as plain data, their texts shared (:func:`rebuild_all`). Any
    manifest: an expanded one's files too (:mod:`resolver_hook.inventory.kept`)."""
    texts = _Texts()
    columns = _dump_columns(Manifest, manifests, texts)
    return {"texts": texts.texts, "columns": columns}


def rebuild_all(data: dict[str, Any]) -> list[Manifest]:
    """The manifests :func:`dump_all` wrote, in their order, made again without
    validation."""
    made = {
        kind: [None, *(_made(kind, text) for text in texts)]
        for kind, texts in data["texts"].items()
    }
    return _load_columns(Manifest, data["columns"], made)


# --- one column per field, each value a place in a table of texts -------------------


class _Texts:
    """The distinct texts of each kind that a manifest's values are made from (its
    entries repeat their versions, ranges and kernel lists); a column holds places in
    them, from 1 (0: None)."""

    def __init__(self) -> None:
        self.texts: dict[str, list[Any]] = {}
        self._places: dict[tuple[str, Any], int] = {}

    def place(self, kind: str, text: Any) -> int:
        key = (kind, _hashable(text))
        found = self._places.get(key)
        if found is None:
            table = self.texts.setdefault(kind, [])
            table.append(text)
            found = self._places[key] = len(table)
        return found


def _dump_columns(cls: type, values: Sequence[Any], texts: _Texts) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for f in fields(cls):
        column = [getattr(v, f.name) for v in values]
        if f.type == "Needs":
            columns[f.name] = _dump_columns(Needs, column, texts)
        elif (inner := _CLASSES.get(f.type)) is not None:
            columns[f.name] = [_dump_columns(inner, list(v), texts) for v in column]
        elif (kind := _FIELDS[f.type]) is None:
            columns[f.name] = column
        else:
            columns[f.name] = _places(kind, column, texts)
    return columns


def _places(kind: str, column: list[Any], texts: _Texts) -> list[int]:
    """Each value's place in the table of ``kind``; its text made once per object (an
    expanded manifest's files share their release's version, their entry's rules: the
    column holds them, so their ids stand)."""
    text = _KINDS[kind][0]
    done: dict[int, int] = {id(None): 0}
    out = []
    for v in column:
        found = done.get(id(v))
        if found is None:
            found = done[id(v)] = texts.place(kind, text(v))
        out.append(found)
    return out


def _load_columns(cls: type[Any], columns: dict[str, Any], made: dict[str, list[Any]]) -> list[Any]:
    values: dict[str, Sequence[Any]] = {}
    for f in fields(cls):
        column = columns[f.name]
        if f.type == "Needs":
            values[f.name] = _load_columns(Needs, column, made)
        elif (inner := _CLASSES.get(f.type)) is not None:
            values[f.name] = [tuple(_load_columns(inner, c, made)) for c in column]
        elif (kind := _FIELDS[f.type]) is None:
            values[f.name] = column
        else:
            values[f.name] = list(map(made.get(kind, _NONE_ONLY).__getitem__, column))
    return from_columns(cls, values)


_NONE_ONLY = [None]  # the table of a kind no value of the manifest has


# --- the text of each kind of value --------------------------------------------------

_MADE: dict[tuple[str, Any], Any] = {}  # values made again in this process, by text


def _hashable(text: Any) -> Any:
    return tuple(text) if isinstance(text, list) else text


def _made(kind: str, text: Any) -> Any:
    """The value of ``kind`` made from ``text``, once per text in a process (validation
    shares equal values too)."""
    key = (kind, _hashable(text))
    value = _MADE.get(key)
    if value is None:
        value = _MADE[key] = _KINDS[kind][1](key[1])
    return value


def _specifier_text(spec: SpecifierSet) -> str:
    """Its specifiers in their order (``str`` sorts them): the set made again iterates
    them as the one read did."""
    return ",".join(map(str, spec))


def _requirement_text(req: Requirement) -> str:
    """What ``Requirement`` makes ``req`` again from (``str`` sorts the specifiers)."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    what = f" @ {req.url}" if req.url else _specifier_text(req.specifier)
    marker = f" ; {req.marker}" if req.marker is not None else ""
    return f"{req.name}{extras}{what}{marker}"


def _floors(texts: tuple[str, ...]) -> tuple[tuple[KernelTarget, SpecifierSet], ...]:
    """``cuda_floors`` from its texts, target and range after each other."""
    pairs = zip(texts[::2], texts[1::2], strict=True)
    return tuple((parse_target(k), _made("specifier", s)) for k, s in pairs)


# Each kind of value: (value -> its text, text -> the value); a list's text is a list,
# read back as a tuple.
_KINDS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "strings": (list, tuple),
    "pair": (list, tuple),
    "version": (str, Version),
    "specifier": (_specifier_text, SpecifierSet),
    "targets": (lambda v: list(map(str, v)), lambda t: tuple(map(parse_target, t))),
    "requirements": (
        lambda v: list(map(_requirement_text, v)),
        lambda t: tuple(map(requirement, t)),
    ),
    "date": (datetime.date.isoformat, datetime.date.fromisoformat),
    "tags": (
        lambda v: sorted(map(str, v)),
        lambda t: frozenset(Tag(*text.split("-")) for text in t),
    ),
    "floors": (
        lambda v: [text for k, s in v for text in (str(k), _specifier_text(s))],
        _floors,
    ),
}
# Each field's annotation -> the kind of its values; None: plain data as it is.
_FIELDS: dict[str, str | None] = {
    "str": None,
    "str | None": None,
    "bool": None,
    "bool | None": None,
    "int | None": None,
    "NormalizedName": None,
    "NormalizedName | None": None,
    "tuple[str, ...]": "strings",
    "tuple[NormalizedName, ...]": "strings",
    "tuple[int, int] | None": "pair",
    "Version": "version",
    "Version | None": "version",
    "SpecifierSet | None": "specifier",
    "tuple[KernelTarget, ...]": "targets",
    "tuple[Requirement, ...]": "requirements",
    "datetime.date | None": "date",
    "frozenset[Tag]": "tags",
    "tuple[tuple[KernelTarget, SpecifierSet], ...]": "floors",
}
# Fields holding value classes: a column of them per field, ``Needs`` one each.
_CLASSES: dict[str, type] = {
    "tuple[WheelFlavour, ...]": WheelFlavour,
    "tuple[IndexFlavour, ...]": IndexFlavour,
}
