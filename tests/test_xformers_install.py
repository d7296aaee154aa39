"""``resolver-hook install xformers==0.0.25.post1 torch`` with real pip, loopback: the
built-in rules couple the unpinned torch to the release xformers' METADATA pins.

The pages have the real shapes, served on 127.0.0.1 through mirrors of
https://pypi.org/simple (xformers, from its PyPI files) and
https://download.pytorch.org/whl (torch 2.2.2+cu121 on its cu121 page); the wheels are
small stand-ins built here with the real names and the real ``Requires-Dist``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.installenv import GpuIndex, venv_for
from tests.test_install import install, versions
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

_CP = f"cp{sys.version_info[0]}{sys.version_info[1]}"
_PY = f"{sys.version_info[0]}{sys.version_info[1]}"
# xformers 0.0.25.post1's PyPI files are for CPython 3.8-3.11 (docs/facts.md 6.8).
_HAS_BUILD = (3, 8) <= sys.version_info[:2] <= (3, 11)


def _index(tmp_path: Path) -> tuple[LoopbackIndex, GpuIndex]:
    index = LoopbackIndex(tmp_path / "index", core_metadata=True)
    built = tmp_path / "built"
    xformers = build_wheel(
        built,
        "xformers",
        "0.0.25.post1",
        tag=f"{_CP}-{_CP}-manylinux2014_x86_64",
        requires=["torch==2.2.2"],  # its METADATA's torch pin (numpy left out)
    )
    index.add(xformers)
    torch = build_wheel(built, "torch", "2.2.2+cu121", tag=f"{_CP}-{_CP}-linux_x86_64")
    index.add(torch, simple=False, flavour="cu121")
    manifests = tmp_path / "manifests"  # none of its own: the built-in ones
    manifests.mkdir()
    return index, GpuIndex(index=index, wheels={}, manifests=manifests)


def _env(index: LoopbackIndex) -> dict[str, str]:
    """The real pages' addresses, read from the loopback index (while it serves)."""
    return {
        "RESOLVER_HOOK_OFFLINE": "0",
        "RESOLVER_HOOK_MIRRORS": (
            f"https://pypi.org/simple={index.url}/simple "
            f"https://download.pytorch.org/whl={index.url}/links"
        ),
    }


@pytest.mark.skipif(not _HAS_BUILD, reason="xformers 0.0.25.post1 has builds for 3.8-3.11")
def test_the_unpinned_torch_is_the_one_the_pinned_xformers_requires(tmp_path: Path) -> None:
    index, gi = _index(tmp_path)
    with index.serving():
        env = _env(index)
        venv = venv_for("pip", tmp_path / "venv")
        target = f"linux-x86_64-py{_PY}-cuda12.8-sm89"
        proc = install("pip", gi, venv, "xformers==0.0.25.post1", "torch", env=env, target=target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "couples with torch==2.2.2" in proc.stderr, proc.stderr
    got = versions(venv)
    assert (got["torch"], got["xformers"]) == ("2.2.2+cu121", "0.0.25.post1")


@pytest.mark.skipif(not _HAS_BUILD, reason="xformers 0.0.25.post1 has builds for 3.8-3.11")
def test_the_pair_is_refused_before_pip_runs_where_that_torch_cannot(tmp_path: Path) -> None:
    index, gi = _index(tmp_path)
    with index.serving():
        env = _env(index)
        venv = venv_for("pip", tmp_path / "venv")
        before = versions(venv)
        target = f"linux-x86_64-py{_PY}-cuda13.0-sm100"
        proc = install("pip", gi, venv, "xformers==0.0.25.post1", "torch", env=env, target=target)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    # The mirror serves torch's cu121 page alone (the others answer 404: not there), so
    # no other xformers or torch build is known to run here: the full refusal.
    assert "error: xformers: no build of xformers fits this machine" in proc.stderr
    said = " ".join(proc.stderr.split())  # fitted to 80 columns: wrapped at spaces
    assert "needs torch==2.2.2; no such build of torch fits this machine" in said
    assert versions(venv) == before  # nothing installed
