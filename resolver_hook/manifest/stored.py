"""A built-in manifest validated once, kept as plain data by the sha256 of its text.

Validating the five built-in manifests of a five-package plan (some 275 entries) took
about 7 ms of every plan made anew, most of it in checks that find nothing in a text
they passed before. Validation is pure: its result depends on the manifest's text, the
source it is named by (the file's name), the URL policy (the built-in ones are read
under the strict one) and the code that reads it (the tool's rules; packaging's
parsers; Python's). :func:`kept_builtin` keeps that result in the user cache
(``manifests/<name>.json``, written atomically as the other entries are) under a key of
all of these: the sha256 of the text, the tool's version and its own files (their
count, size and newest time, as the plan store keys them: a checkout edited in place
is validated again), packaging's version and Python's. A text holding a URL with
credentials is never kept: reading it hands them to the index client.

The result is stored field by field, each value as the text it is made again from by
the constructor validation used (``Version``, ``SpecifierSet`` with its specifiers in
their order, ``Requirement``, the kernel targets, the dates, the tags), values of equal
text made once in a process (validation shares them too). A field of a type with no
text form here fails the round trip of every built-in manifest in the tests.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import hashlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from packaging import __version__ as _packaging_version
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.version import Version

from resolver_hook import __version__
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.userinfo import has_credentials
from resolver_hook.ground.valueclass import fields, from_columns
from resolver_hook.manifest.model import IndexFlavour, Manifest, Needs, WheelFlavour
from resolver_hook.manifest.needs import _requirement
from resolver_hook.portable.cuda import KernelTarget, parse_target

__all__ = ["dump", "kept_builtin", "rebuild"]

_FORMAT = 1


def kept_builtin(file_name: str, text: str, validate: Callable[[], Manifest]) -> Manifest:
    """``validate()``, the manifest of the built-in file ``file_name`` holding ``text``,
    or the result kept from a validation of the same text by the same code."""
    folder = _cache.cache_dir(os.environ)
    if folder is None:
        return validate()
    path = os.path.join(folder, "manifests", f"{file_name}.json")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    key = {"format": _FORMAT, "sha256": digest, "code": _code()}
    found, _ = _cache.read(path, key)
    if isinstance(found, dict):
        try:
            return rebuild(found)
        except (LookupError, TypeError, ValueError, AttributeError):
            pass  # not ours after all: validated again, and written anew
    manifest = validate()
    if not has_credentials(text):  # so a text kept never held any
        with contextlib.suppress(TypeError, ValueError):  # a value JSON cannot hold
            _cache.write(path, key, dump(manifest))
    return manifest


@functools.cache
def _code() -> list[Any]:
    """What decides a result besides the text: the tool (its version and files, taken
    once: the code of a process is the code it loaded), packaging, Python."""
    from resolver_hook._plancache import _tool_files

    return [__version__, _tool_files(), _packaging_version, list(sys.version_info[:2])]


def dump(manifest: Manifest) -> dict[str, Any]:
    """``manifest`` as plain data (:func:`rebuild` makes it again)."""
    return _dump_columns(Manifest, [manifest])


def rebuild(data: dict[str, Any]) -> Manifest:
    """The manifest :func:`dump` wrote, made again without validation."""
    manifest: Manifest
    (manifest,) = _load_columns(Manifest, data)
    return manifest


# --- one column of values per field -------------------------------------------------


def _dump_columns(cls: type, values: Sequence[Any]) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for f in fields(cls):
        column = [getattr(v, f.name) for v in values]
        inner = _CLASSES.get(f.type)
        if f.type == "Needs":
            columns[f.name] = _dump_columns(Needs, column)
        elif inner is not None:
            columns[f.name] = [_dump_columns(inner, list(v)) for v in column]
        else:
            put = _CODECS[f.type][0]
            columns[f.name] = (
                column if put is None else [None if v is None else put(v) for v in column]
            )
    return columns


def _load_columns(cls: type[Any], columns: dict[str, Any]) -> list[Any]:
    made: dict[str, Sequence[Any]] = {}
    for f in fields(cls):
        column = columns[f.name]
        inner = _CLASSES.get(f.type)
        if f.type == "Needs":
            made[f.name] = _load_columns(Needs, column)
        elif inner is not None:
            made[f.name] = [tuple(_load_columns(inner, c)) for c in column]
        else:
            get = _CODECS[f.type][1]
            made[f.name] = (
                column if get is None else [None if v is None else get(v) for v in column]
            )
    return from_columns(cls, made)


# --- the text of each kind of value --------------------------------------------------

_MADE: dict[tuple[str, object], Any] = {}  # values made again in this process, by text


def _once(kind: str, make: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``make`` of a text (a list of texts: its tuple), once per text in a process."""

    def load(text: Any) -> Any:
        key = (kind, tuple(text) if isinstance(text, list) else text)
        value = _MADE.get(key)
        if value is None:
            value = _MADE[key] = make(key[1])
        return value

    return load


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


def _targets(texts: tuple[str, ...]) -> tuple[KernelTarget, ...]:
    return tuple(map(parse_target, texts))


def _tags(texts: tuple[str, ...]) -> frozenset[Tag]:
    return frozenset(Tag(*text.split("-")) for text in texts)


_version = _once("version", Version)
_specifier = _once("specifier", SpecifierSet)
_strings = _once("strings", tuple)

# Annotation text -> (value to plain data, plain data to value); None: as it is. A
# value of None is None both ways.
_CODECS: dict[str, tuple[Callable[[Any], Any] | None, Callable[[Any], Any] | None]] = {
    "str": (None, None),
    "str | None": (None, None),
    "bool": (None, None),
    "bool | None": (None, None),
    "int | None": (None, None),
    "NormalizedName": (None, None),
    "NormalizedName | None": (None, None),
    "tuple[str, ...]": (list, _strings),
    "tuple[NormalizedName, ...]": (list, _strings),
    "tuple[int, int] | None": (list, tuple),
    "Version": (str, _version),
    "Version | None": (str, _version),
    "SpecifierSet | None": (_specifier_text, _specifier),
    "tuple[KernelTarget, ...]": (lambda v: list(map(str, v)), _once("targets", _targets)),
    "tuple[Requirement, ...]": (
        lambda v: list(map(_requirement_text, v)),
        _once("requirements", lambda texts: tuple(map(_requirement, texts))),
    ),
    "datetime.date | None": (datetime.date.isoformat, _once("date", datetime.date.fromisoformat)),
    "frozenset[Tag]": (lambda v: sorted(map(str, v)), _once("tags", _tags)),
    "tuple[tuple[KernelTarget, SpecifierSet], ...]": (
        lambda v: [[str(k), _specifier_text(s)] for k, s in v],
        lambda v: tuple((parse_target(k), _specifier(s)) for k, s in v),
    ),
}
# Fields holding value classes: a column of them per field, ``Needs`` one each.
_CLASSES: dict[str, type] = {
    "tuple[WheelFlavour, ...]": WheelFlavour,
    "tuple[IndexFlavour, ...]": IndexFlavour,
}
