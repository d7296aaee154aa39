"""An install reads the pages of the packages it plans, and only those: the ones asked
for, and one with a manifest that arrives as a dependency. Real pip and uv, loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installenv import GpuIndex, venv_for, write_manifest
from tests.test_install import install, versions
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

# The pages are the loopback index's: read them (the tests run offline by default).
ONLINE = {"RESOLVER_HOOK_OFFLINE": "0"}


def _flavour(index: LoopbackIndex, label: str, name: str) -> dict[str, str | list[str]]:
    page = index.links_url(label, name)
    return {"url": page, "version": f"2.0+{label}", "cuda": ">=13.0", "gpu": ["sm_100"]}


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_pages_of_packages_not_planned_are_not_read(tmp_path: Path, tool: str) -> None:
    """``other``'s page is missing (404): asked for, the plan would say it could not read
    it; installing ``kidx`` alone never asks."""
    out = tmp_path / "built"
    index = LoopbackIndex(tmp_path / "index")
    index_wheel = build_wheel(out, "kidx", "2.0+cu130")
    index.add(index_wheel, simple=False, flavour="cu130")
    with index.serving():
        manifests = tmp_path / "manifests"
        manifests.mkdir()
        write_manifest(manifests, "kidx", "index", _flavour(index, "cu130", "kidx"))
        write_manifest(manifests, "other", "index", _flavour(index, "cu130", "other"))
        gi = GpuIndex(index=index, wheels={}, manifests=manifests)
        venv = venv_for(tool, tmp_path / "venv")
        proc = install(tool, gi, venv, "kidx", env=ONLINE, check=True)
        asked = install(tool, gi, venv, "kidx", "other", env=ONLINE)
    assert versions(venv)["kidx"] == "2.0+cu130"
    missing = index.links_url("cu130", "other")
    assert f"kidx: {index.wheel_url(index_wheel)}" in proc.stderr  # its own page was read
    assert missing not in proc.stderr
    assert missing in asked.stderr  # the same manifests, with other planned: its page is read


def test_a_dependencys_page_is_read_when_it_is_planned(tmp_path: Path) -> None:
    """``kapp`` (no manifest) needs ``kidx``, an index flavour: once the dry run shows
    kidx arriving, its page is read and the plan names the very wheel it lists."""
    out = tmp_path / "built"
    index = LoopbackIndex(tmp_path / "index")
    wheel = build_wheel(out, "kidx", "2.0+cu130")
    index.add(wheel, simple=False, flavour="cu130")
    index.add(build_wheel(out, "kidx", "2.0"))  # what the index alone would give
    index.add(build_wheel(out, "kapp", "1.0", requires=["kidx"]))
    with index.serving():
        manifests = tmp_path / "manifests"
        manifests.mkdir()
        write_manifest(manifests, "kidx", "index", _flavour(index, "cu130", "kidx"))
        gi = GpuIndex(index=index, wheels={}, manifests=manifests)
        venv = venv_for("pip", tmp_path / "venv")
        proc = install("pip", gi, venv, "kapp", env=ONLINE, check=True)
    assert "kidx arrives as a dependency (kapp 1.0 (requires kidx)" in proc.stderr
    assert f"kidx: {index.wheel_url(wheel)}" in proc.stderr
    assert versions(venv)["kidx"] == "2.0+cu130"
