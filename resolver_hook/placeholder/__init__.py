"""Loud placeholders: name-reservation sdists that fail at install and at import.

``build_placeholder`` renders ``placeholder_template/`` from a flavour manifest and
builds a reproducible sdist (and, on request, the escape-hatch wheel);
``check_placeholder`` proves with real pip and uv that it fails loudly.
"""

from resolver_hook.placeholder.build import BuiltPlaceholder, build_from_data, build_placeholder
from resolver_hook.placeholder.check import CheckResult, check_placeholder
from resolver_hook.placeholder.data import DEFAULT_VERSION, placeholder_data

__all__ = [
    "DEFAULT_VERSION",
    "BuiltPlaceholder",
    "CheckResult",
    "build_from_data",
    "build_placeholder",
    "check_placeholder",
    "placeholder_data",
]
