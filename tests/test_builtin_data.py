"""Tests of the shipped data (resolver_hook/manifests/*.toml), not of any rule.

Every test here is marked ``builtin_data``: it reads the manifests resolver-hook ships.
Rule tests elsewhere read frozen fixtures (tests/frozen.py), so a correction to the
shipped data breaks only tests in this file. Facts cite docs/facts.md.
"""

from __future__ import annotations

import pytest

from resolver_hook.manifest import builtin_manifests

pytestmark = pytest.mark.builtin_data


def test_builtin_manifests_load() -> None:
    ms = builtin_manifests()
    assert set(ms) == {"torch", "torchvision", "torchaudio", "flash-attn", "natten", "tilert"}
