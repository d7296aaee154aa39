"""An abi3 wheel from cp38 is installed on a newer Python: real pip and uv, loopback.

tilelang's shape: one ``cp38-abi3`` wheel per platform on the package's PyPI page (read
here from a loopback index through a mirror of https://pypi.org/simple), a manifest
entry for Pythons 3.10-3.14. The plan pins the file; the installer installs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installenv import GpuIndex, venv_for, write_manifest
from tests.test_install import B200, install, versions
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_an_abi3_wheel_is_planned_and_installed(tmp_path: Path, tool: str) -> None:
    index = LoopbackIndex(tmp_path / "index")
    wheel = build_wheel(tmp_path / "built", "tk", "0.1.15", tag="cp38-abi3-manylinux_2_17_x86_64")
    index.add(wheel)
    with index.serving():
        manifests = tmp_path / "manifests"
        manifests.mkdir()
        pythons = ["3.10", "3.11", "3.12", "3.13", "3.14"]
        entry = {"versions": ">=0.1.13", "platforms": ["linux_x86_64"], "python": pythons}
        write_manifest(manifests, "tk", "index", entry)
        gi = GpuIndex(index=index, wheels={}, manifests=manifests)
        venv = venv_for(tool, tmp_path / "venv")
        env = {
            "RESOLVER_HOOK_OFFLINE": "0",
            "RESOLVER_HOOK_MIRRORS": f"https://pypi.org/simple={index.url}/simple",
        }
        proc = install(tool, gi, venv, "tk", env=env, target=B200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"resolver-hook: tk: {index.wheel_url(wheel)}: tag cp38-abi3-" in proc.stderr
    assert versions(venv)["tk"] == "0.1.15"


# torch 2.5.1's shape: its triton pin carries a marker (docs/facts.md section 6.11).
_PIN = 'trt==3.1.0; platform_system == "Linux" and platform_machine == "x86_64"'


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_pinned_pair_that_cannot_go_together_is_refused_before_installing(
    tmp_path: Path, tool: str
) -> None:
    index = LoopbackIndex(tmp_path / "index", core_metadata=True)
    built = tmp_path / "built"
    index.add(build_wheel(built, "tch", "2.5.1", requires=[_PIN]))
    for v in ("3.0.0", "3.1.0"):
        index.add(build_wheel(built, "trt", v))
    with index.serving():
        manifests = tmp_path / "manifests"
        manifests.mkdir()
        for name in ("tch", "trt"):
            write_manifest(manifests, name, "index", {"versions": ">=1.0"})
        gi = GpuIndex(index=index, wheels={}, manifests=manifests)
        venv = venv_for(tool, tmp_path / "venv")
        before = versions(venv)
        env = {
            "RESOLVER_HOOK_OFFLINE": "0",
            "RESOLVER_HOOK_MIRRORS": f"https://pypi.org/simple={index.url}/simple",
        }
        proc = install(tool, gi, venv, "tch==2.5.1", "trt==3.0.0", env=env, target=B200)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "your requirement trt==3.0.0 rules out trt 3.1.0" in proc.stderr, proc.stderr
    assert "tch" in proc.stderr
    assert "hint: your requirement trt==3.0.0 rules out trt 3.1.0" in proc.stderr, proc.stderr
    assert versions(venv) == before  # nothing installed
