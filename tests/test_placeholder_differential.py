"""The placeholder runtime's verdicts held against the resolver's, flavour by flavour.

A placeholder carries its own, stdlib-only copy of the matching rules
(``placeholder_template/package/_placeholder.py``: ``checks``). It must say "fits" of a
flavour exactly when ``evaluate_flavour`` finds no rule failing, on the same machine.
Both sides read the same machine: one set of ``RESOLVER_HOOK_OVERRIDE_*`` variables,
given to resolver-hook's detection and to the placeholder's own ``detect``. The
interpreter is this one on both sides.

Compared: whether the build runs here (tags, Python, CUDA or ROCm, GPU kernels). Left
out: couplings (``requires``: a placeholder checks them against what is installed, the
resolver against a plan), and the resolver's two choosing rules, ``accelerator`` (a CPU
build runs on a GPU machine; it is only not chosen there) and ``specifier`` (no user
requirement here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resolver_hook.host import detect
from resolver_hook.manifest import Manifest, load_manifest
from resolver_hook.portable.overrides import (
    OVERRIDE_ARCH,
    OVERRIDE_CUDA,
    OVERRIDE_GLIBC,
    OVERRIDE_SM,
)
from resolver_hook.publish.placeholder.data import placeholder_data
from resolver_hook.publish.placeholder.render import runtime
from resolver_hook.resolve import evaluate_flavour

FROZEN = Path(__file__).resolve().parent / "data" / "frozen-manifests"

# (label, arch, driver CUDA or "" for no NVIDIA GPU, compute capabilities, glibc)
MACHINES = [
    ("b200-cuda13.0", "x86_64", "13.0", "10.0", "2.39"),
    ("rtx4090-cuda12.6", "x86_64", "12.6", "8.9", "2.35"),
    ("rtx5090-cuda12.8", "x86_64", "12.8", "12.0", "2.39"),
    ("rtx5090-cuda13.0", "x86_64", "13.0", "12.0", "2.39"),
    ("v100-cuda13.0", "x86_64", "13.0", "7.0", "2.39"),
    ("a100-cuda11.8-glibc2.17", "x86_64", "11.8", "8.0", "2.17"),
    ("a100+h100-cuda12.8", "x86_64", "12.8", "8.0,9.0", "2.35"),
    ("no-gpu-x86_64", "x86_64", "", "", "2.39"),
    ("gb10-cuda13.0", "aarch64", "13.0", "12.1", "2.39"),
    ("gh200-cuda12.8", "aarch64", "12.8", "9.0", "2.35"),
    ("no-gpu-aarch64", "aarch64", "", "", "2.39"),
]


def _env(arch: str, cuda: str, sm: str, glibc: str) -> dict[str, str]:
    env = {OVERRIDE_ARCH: arch, OVERRIDE_CUDA: cuda, OVERRIDE_GLIBC: glibc}
    if sm:
        env[OVERRIDE_SM] = sm
    return env


def _flavours(manifest: Manifest) -> list[tuple[Any, dict[str, Any]]]:
    """Each flavour of ``manifest`` beside its placeholder form.

    ``placeholder_data`` lists wheels then indexes, newest version first, in manifest
    order within a version (a stable sort): the same order is rebuilt here.
    """
    ours = sorted([*manifest.wheels, *manifest.indexes], key=lambda f: f.version, reverse=True)
    theirs = placeholder_data(manifest)["flavours"]
    assert len(ours) == len(theirs)
    for f, d in zip(ours, theirs, strict=True):
        assert str(f.version) == d["version"]
    return list(zip(ours, theirs, strict=True))


MANIFESTS = sorted(FROZEN.glob("*.toml"))
# The resolver's rules that choose among builds that run, rather than judge whether one runs.
CHOOSING = {"accelerator", "specifier"}


@pytest.mark.parametrize("machine", MACHINES, ids=[m[0] for m in MACHINES])
@pytest.mark.parametrize("path", MANIFESTS, ids=[p.stem for p in MANIFESTS])
def test_placeholder_says_fits_exactly_when_the_resolver_does(
    path: Path, machine: tuple[str, str, str, str, str]
) -> None:
    _, arch, cuda, sm, glibc = machine
    env = _env(arch, cuda, sm, glibc)
    profile = detect(env, use_cache=False)
    module = runtime()
    host = module.detect(env)
    manifest = load_manifest(path)
    compared = 0
    for flavour, data in _flavours(manifest):
        outcomes = evaluate_flavour(flavour, manifest, profile)
        failing = sorted(r for r, o in outcomes.items() if o.status == "fail" and r not in CHOOSING)
        placeholder = [c[0] for c in module.checks(host, data) if c[0] != "requires"]
        assert (not failing) == (not placeholder), (
            f"{path.stem} {data.get('filename') or data.get('url')} {data['version']}: "
            f"resolver fails {failing}, placeholder fails {placeholder}"
        )
        compared += 1
    assert compared, f"{path.stem}: no flavour compared"


def test_the_table_covers_fits_and_refusals() -> None:
    """Across the table both verdicts occur, so agreement is not agreement on one answer."""
    module = runtime()
    verdicts = set()
    for path in MANIFESTS:
        manifest = load_manifest(path)
        for _, arch, cuda, sm, glibc in MACHINES:
            host = module.detect(_env(arch, cuda, sm, glibc))
            for _, data in _flavours(manifest):
                verdicts.add(not [c for c in module.checks(host, data) if c[0] != "requires"])
    assert verdicts == {True, False}
