"""The TOML document of a manifest's text, and of the built-in data files, read once.

The TOML parser, pure Python, takes ~6 ms per 10 kB (and ~4 ms to import); every
command reads the table of NVIDIA's library wheels (20 kB) for its names and the twins
table, and a plan the built-in manifests it names, the manifest files it is given and
the ``pyproject.toml`` of the folder it runs in. :func:`builtin_document` and
:func:`file_document` keep each file's document as JSON in the user cache by the sha256
of its text (reading the JSON back takes well under a millisecond): one entry per file,
a new text replaces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable
from typing import Any

from resolver_hook.ground import cache as _cache
from resolver_hook.ground.credentials import has_credentials
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.limits import MAX_MANIFEST_BYTES
from resolver_hook.manifest.tables import ManifestError

__all__ = ["builtin_document", "document", "file_document", "kept_document"]


def document(text: str, source: str) -> dict[str, Any]:
    """The TOML document of a manifest's text; ManifestError names ``source``."""
    if len(text) > MAX_MANIFEST_BYTES:
        raise ManifestError([f"{source}: larger than the {MAX_MANIFEST_BYTES} bytes allowed"])
    try:
        return toml_loads(text)
    except TomlError as exc:
        raise ManifestError([f"{source}: not valid TOML: {exc}"]) from None


def builtin_document(file_name: str, text: str, source: str) -> dict[str, Any]:
    """:func:`document` of a built-in data file, kept as JSON in the user cache
    (``manifests/<file_name>.json``) by the sha256 of its text."""
    return kept_document(file_name, text, lambda: document(text, source))


def file_document(
    path: str | os.PathLike[str], text: str, parse: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """``parse()`` of a TOML file the user named (a manifest, a ``pyproject.toml``), kept as
    a built-in file's document is: one entry per file (named by the sha256 of its absolute
    path), by the sha256 of its text. The file is read every time; only the parse is saved.
    A text holding a URL with credentials is parsed every time: nothing cached holds them
    (resolver_hook.ground.credentials)."""
    if has_credentials(text):
        return parse()
    where = hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:32]
    return kept_document(f"file-{where}", text, parse)


def kept_document(name: str, text: str, parse: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``parse()``, the TOML document of ``text``, or the copy kept as JSON in the user
    cache (``manifests/<name>.json``) when that copy was made from the same text."""
    folder = _cache.cache_dir(os.environ)
    if folder is None:
        return parse()
    path = os.path.join(folder, "manifests", f"{name}.json")
    key = {"format": 1, "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}
    kept, _ = _cache.read(path, key)
    if isinstance(kept, dict):
        return kept
    data = parse()
    with contextlib.suppress(TypeError, ValueError):  # a TOML date has no JSON form
        _cache.write(path, key, data)
    return data
