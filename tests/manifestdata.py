"""Flavour manifests written inline in tests: one package's ``[[index]]`` tables, parsed."""

from __future__ import annotations

from resolver_hook.manifest import Manifest, parse_manifest


def index_manifest(name: str, *indexes: dict[str, object]) -> Manifest:
    """The manifest of package ``name`` whose ``[[index]]`` tables are ``indexes``."""
    data = {"schema": 1, "package": {"name": name}, "index": list(indexes)}
    return parse_manifest(data, source="test")
