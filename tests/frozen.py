"""Frozen manifests for rule tests: fixtures under tests/data/frozen-manifests.

Rule tests (resolver, doctor, CLI, install) resolve against these copies, never
against the data shipped in ``resolver_hook/manifests``: correcting a built-in fact
must not break a test of a rule. ``conftest.py`` puts them in place of the built-in
manifests for every test not marked ``builtin_data``; tests of the shipped data are
in ``tests/test_builtin_data.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from resolver_hook.manifest import Manifest, loads_manifest
from tests.paths import DATA

__all__ = ["FROZEN_DIR", "frozen_files", "frozen_manifests", "frozen_sources"]

FROZEN_DIR = DATA / "frozen-manifests"


def frozen_files() -> list[str]:
    """The frozen manifest files, sorted (for ``--manifest`` arguments)."""
    return [str(p) for p in sorted(FROZEN_DIR.glob("*.toml"))]


@functools.cache
def _frozen() -> tuple[Manifest, ...]:
    # Sourced as "built-in (...)": they stand in for the built-in data, so every
    # message and note that names a built-in manifest reads the same.
    return tuple(
        loads_manifest(p.read_text(encoding="utf-8"), source=f"built-in ({p.name})")
        for p in sorted(FROZEN_DIR.glob("*.toml"))
    )


def frozen_sources() -> dict[str, tuple[str, Callable[[], Manifest]]]:
    """The frozen manifests as ``load._builtin_sources`` gives the built-in ones."""
    return {m.name: (m.source, functools.partial(lambda m: m, m)) for m in _frozen()}


def frozen_manifests() -> dict[str, Manifest]:
    """The frozen manifests by canonical name (what ``builtin_manifests()`` returns in tests)."""
    return {m.name: m for m in _frozen()}
