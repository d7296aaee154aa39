"""The TOML document of a manifest's text, and of the built-in data files, read once.

The TOML parser, pure Python, takes ~6 ms per 10 kB; every command reads the table of
NVIDIA's library wheels (20 kB) for its names and the twins table, and a plan the
built-in manifests it names. :func:`builtin_document` keeps each built-in file's
document as JSON in the user cache by the sha256 of its text (reading the JSON back
takes well under a millisecond): one file per built-in file, a new text replaces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from typing import Any

from resolver_hook.ground import cache as _cache
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.limits import MAX_MANIFEST_BYTES
from resolver_hook.manifest.tables import ManifestError

__all__ = ["builtin_document", "document"]


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
    folder = _cache.cache_dir(os.environ)
    if folder is None:
        return document(text, source)
    path = os.path.join(folder, "manifests", f"{file_name}.json")
    key = {"format": 1, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    kept, _ = _cache.read(path, key)
    if isinstance(kept, dict):
        return kept
    data = document(text, source)
    with contextlib.suppress(TypeError, ValueError):  # a TOML date has no JSON form
        _cache.write(path, key, data)
    return data
