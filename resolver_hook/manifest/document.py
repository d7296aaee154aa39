"""The TOML document of a manifest's text, and of the built-in data files, read once.

Every command reads the table of NVIDIA's library wheels (20 kB) for its names and the
twins table, and a plan the built-in manifests it names: :func:`builtin_document` keeps
each built-in file's document in the user cache by the sha256 of its text
(:func:`resolver_hook.ground.toml.kept`), one entry per built-in file.
"""

from __future__ import annotations

from typing import Any

from resolver_hook.errors import ManifestError
from resolver_hook.ground.toml import TomlError, kept
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.limits import MAX_MANIFEST_BYTES

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
    (:func:`resolver_hook.ground.toml.kept`) by the sha256 of its text."""
    return kept(file_name, text, lambda: document(text, source))
