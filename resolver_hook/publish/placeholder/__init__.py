"""Loud placeholders: name-reservation sdists that fail at install and at import.

``build_placeholder`` renders ``placeholder_template/`` from a flavour manifest and
builds a reproducible sdist (never a wheel: pip and uv would install it silently);
``build_retired`` makes one for a retired or renamed name;
``check_placeholder`` proves with real pip and uv that it fails loudly.
"""

from resolver_hook.publish.placeholder.build import (
    BuiltPlaceholder,
    build_from_data,
    build_placeholder,
    build_retired,
)
from resolver_hook.publish.placeholder.check import check_placeholder
from resolver_hook.publish.placeholder.data import DEFAULT_VERSION, placeholder_data

__all__ = [
    "DEFAULT_VERSION",
    "BuiltPlaceholder",
    "build_from_data",
    "build_placeholder",
    "build_retired",
    "check_placeholder",
    "placeholder_data",
]
