"""Flavour manifests: what builds of a package exist and what each needs.

``parse_manifest`` validates a parsed mapping (pure); ``load_manifest`` reads one
TOML file; ``collect_manifests`` gathers them from every source (built-in data,
entry points, ``RESOLVER_HOOK_MANIFESTS``, pyproject.toml, ``--manifest``).
"""

from resolver_hook.manifest.load import (
    ENV_INSECURE,
    builtin_manifests,
    collect_manifests,
    load_manifest,
    loads_manifest,
)
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest, WheelFlavour
from resolver_hook.manifest.tables import ManifestError
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
