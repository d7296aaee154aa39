"""Stable locks: the pins an existing lock file holds for a target, kept when it is
written again, as ``pip-compile`` and ``uv pip compile -o`` keep theirs.

Re-running ``lock`` must not move numpy because numpy released; only ``--upgrade`` (every
package) or ``--upgrade-package NAME`` does. The pins of the file already at ``-o`` (the
lines whose marker holds on the target: its machine class) are handed to uv as its
existing output, which uv reads as preferences: a pin that still satisfies the inputs is
kept, one that does not is resolved anew (docs/facts.md section 3).

A file that cannot be read as a lock gives no pins: the lock is then resolved afresh.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import ResolverHookError
from resolver_hook.ground.input import InputError, read_text_input
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.host import HostProfile
from resolver_hook.resolve import marker_environment

__all__ = ["existing_pins", "preferences_text"]

_MAX_LOCK_BYTES = 64 << 20  # the largest lock files are a few MB; a bound, not a guess


def _holds(marker: str | Marker | None, env: Mapping[str, str]) -> bool:
    if marker is None or marker == "":
        return True
    try:
        return (marker if isinstance(marker, Marker) else Marker(marker)).evaluate(dict(env))
    except (InvalidMarker, ValueError, TypeError):
        return False


def existing_pins(path: str, fmt: str, profile: HostProfile) -> dict[NormalizedName, str]:
    """``{name: version}`` of the ``name==version`` pins in the lock at ``path`` that
    hold on ``profile`` (``fmt``: "requirements" or "pylock"); {} when there is none."""
    if path == "-" or not os.path.isfile(path):
        return {}
    try:
        text = read_text_input(path, limit=_MAX_LOCK_BYTES)
    except (InputError, ResolverHookError, OSError):
        return {}
    env = marker_environment(profile)
    pins: dict[NormalizedName, str] = {}
    if fmt == "pylock":
        try:
            doc = toml_loads(text)
        except TomlError:
            return {}
        for package in doc.get("packages", []):
            if not isinstance(package, dict):
                continue
            name, version = package.get("name"), package.get("version")
            ok = isinstance(name, str) and isinstance(version, str)
            if ok and _holds(package.get("marker"), env):
                pins[canonicalize_name(str(name))] = str(version)
        return pins
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "-")):
            continue
        head = line.split(" --", 1)[0]
        try:
            req = Requirement(head)
        except InvalidRequirement:
            continue
        spec = list(req.specifier)
        if req.url or len(spec) != 1 or spec[0].operator != "==":
            continue
        if _holds(req.marker, env):
            pins[canonicalize_name(req.name)] = spec[0].version
    return pins


def preferences_text(pins: Mapping[NormalizedName, str]) -> str:
    """A pylock.toml that names the pins alone: what uv reads from an existing ``-o``."""
    lines = ['lock-version = "1.0"', 'created-by = "resolver-hook"']
    for name, pinned in sorted(pins.items()):
        try:
            version = str(Version(pinned))  # what a TOML string may hold, and uv reads
        except InvalidVersion:
            continue
        lines += ["", "[[packages]]", f'name = "{name}"', f'version = "{version}"']
    return "\n".join(lines) + "\n"
