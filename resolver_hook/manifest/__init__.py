"""Flavour manifests: what builds of a package exist and what each needs.

``parse_manifest`` validates a parsed mapping (pure); ``load_manifest`` reads one
TOML file; ``collect_manifests`` gathers them from every source (built-in data,
entry points, ``RESOLVER_HOOK_MANIFESTS``, pyproject.toml, ``--manifest``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resolver_hook.errors import ManifestError
from resolver_hook.manifest.load import (
    ENV_INSECURE,
    builtin_manifests,
    collect_manifests,
    load_manifest,
    loads_manifest,
)
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest, WheelFlavour

if TYPE_CHECKING:
    from resolver_hook.manifest.validate import parse_manifest

__all__ = [
    "ENV_INSECURE",
    "Flavour",
    "IndexFlavour",
    "Manifest",
    "ManifestError",
    "WheelFlavour",
    "builtin_manifests",
    "collect_manifests",
    "load_manifest",
    "loads_manifest",
    "parse_manifest",
]


def __getattr__(name: str) -> Any:
    # parse_manifest is loaded when first asked for (PEP 562): a plan over the built-in
    # manifests makes them again from the user cache and validates none, so it imports
    # no validator (validate, templates, variantname).
    if name != "parse_manifest":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from resolver_hook.manifest.validate import parse_manifest

    globals()[name] = parse_manifest  # the next lookup is a plain one
    return parse_manifest


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
