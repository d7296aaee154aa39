"""The one TOML reader: ``tomllib`` (``tomli`` on Python 3.10), failures as one error type.

The parser, pure Python, takes ~6 ms per 10 kB and ~4 ms to import, and a plan reads
TOML files on every run: the built-in data files it needs, the manifest files it is
given, ``uv.toml`` and ``pyproject.toml`` files from its folder up. :func:`kept` and
:func:`kept_file` keep a parsed document as JSON in the user cache (``toml/``), by the
sha256 of its text, one entry per file (reading the JSON back takes well under a
millisecond); the file itself is read every time, a new text is parsed again and
replaces the entry, and a text holding a URL with credentials is never kept.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from resolver_hook.ground import cache as _cache
from resolver_hook.ground.record import sha256_hex
from resolver_hook.ground.userinfo import has_credentials

__all__ = ["TomlError", "kept", "kept_file", "loads"]


class TomlError(ValueError):
    """The text is not TOML, or nests deeper than the parser can follow."""


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text into a mapping; every failure is a :class:`TomlError`. The parser
    is imported on first use: a plan whose built-in files are read from the cache
    (:mod:`resolver_hook.manifest.document`) parses no TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(str(exc)) from None
    except RecursionError:  # ``x = [[[[...]]]]``: the parser recurses once per level
        raise TomlError("nested too deeply") from None
    except ValueError as exc:  # the one other the parser lets through: int()'s bound on digits
        if type(exc) is not ValueError:
            raise
        raise TomlError(f"a number of more than {sys.get_int_max_str_digits()} digits") from None
    return data


def kept_file(
    path: str | os.PathLike[str], text: str, parse: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """:func:`kept` for the text of a file the user has (a manifest, a ``uv.toml``, a
    ``pyproject.toml``): one entry per file, named by the sha256 of its absolute path. A
    text holding a URL with credentials is parsed every time: nothing cached holds them
    (:func:`resolver_hook.ground.userinfo.has_credentials`)."""
    if has_credentials(text):
        return parse()
    where = sha256_hex(os.fsencode(os.path.abspath(path)))[:32]
    return kept(f"file-{where}", text, parse)


def kept(name: str, text: str, parse: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``parse()``, the TOML document of ``text``, or the copy kept as JSON in the user
    cache (``toml/<name>.json``) when that copy was made from the same text; ``parse``
    raises what it raises (a caller's own error for a bad file)."""
    folder = _cache.cache_dir(os.environ)
    if folder is None:
        return parse()
    path = os.path.join(folder, "toml", f"{name}.json")
    digest = sha256_hex(text.encode("utf-8", "surrogatepass"))
    key = {"format": 1, "sha256": digest}
    found, _ = _cache.read(path, key)
    if isinstance(found, dict):
        return found
    data = parse()
    with contextlib.suppress(TypeError, ValueError):  # a TOML date has no JSON form
        _cache.write(path, key, data)
    return data
