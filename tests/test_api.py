"""The small public API re-exported by the package, imported on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import resolver_hook


def test_public_names_resolve() -> None:
    for name in resolver_hook.__all__:
        assert getattr(resolver_hook, name) is not None
    plan = resolver_hook.make_plan(
        ["tilert"],
        resolver_hook.collect_manifests(),
        resolver_hook.parse_target("linux-x86_64-py312-cuda13.0-sm103"),
    )
    assert isinstance(plan, resolver_hook.Plan)
    assert plan.package("tilert").action == "rewrite"


def test_unknown_name() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        resolver_hook.nope  # noqa: B018


def test_import_stays_cheap() -> None:
    """`import resolver_hook` (every CLI start) loads none of the heavy modules."""
    code = (
        "import sys, resolver_hook; print(sorted(m for m in sys.modules "
        "if m.startswith(('resolver_hook.', 'packaging'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
