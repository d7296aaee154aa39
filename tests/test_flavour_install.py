"""The three flavour forms end to end, with real pip and real uv.

One loopback index (tests/wheelfactory.py) serves: a name flavour (``demo-cuda`` is
installed as the distribution ``demo-cuda-cu13``), a page template over the coupled
build (``demo-ext``'s page is computed from the ``demo-torch`` build chosen), and a
version pattern (``demo-llama``: every release on its page, none listed one by one).
One install per installer covers all three, each checked on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.installenv import PY, GpuIndex, installed, venv_for, write_manifest
from tests.test_install import install
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

CUDA13 = f"linux-x86_64-py{PY}-cuda13.0-sm89"
ASKED = ("demo-cuda", "demo-torch", "demo-ext", "demo-llama")


@pytest.fixture(scope="module")
def flavour_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    root = tmp_path_factory.mktemp("flavour-index")
    out = root / "built"
    index = LoopbackIndex(root / "index")
    # The plain names on the user's index: what a plain install would take.
    index.add(build_wheel(out, "demo-cuda", "1.0"))
    index.add(build_wheel(out, "demo-ext", "1.0"))
    index.add(build_wheel(out, "demo-llama", "0.2.0"))
    # The flavours.
    index.add(build_wheel(out, "demo-cuda-cu13", "1.0", module="demo_cuda"))
    index.add(build_wheel(out, "demo-torch", "2.12.0+cu130"), simple=False, flavour="cu130")
    index.add(
        build_wheel(out, "demo-ext", "1.0+pt212cu130"),
        simple=False,
        flavour="torch-2.12.0+cu130",
    )
    for v in ("0.3.0", "0.4.0"):
        index.add(build_wheel(out, "demo-llama", v), simple=False, flavour="cu130")
    with index.serving():
        m = root / "manifests"
        m.mkdir()
        cuda13 = {"cuda": ">=13.0"}
        write_manifest(
            m, "demo-cuda", "index", {"install": "demo-cuda-cu13", "version": "1.0", **cuda13}
        )
        torch_url = index.links_url("cu130", "demo-torch")
        write_manifest(
            m, "demo-torch", "index", {"url": torch_url, "version": "2.12.0+cu130", **cuda13}
        )
        ext = {
            "url": f"{index.url}/links/torch-{{demo-torch.minor}}.0+{{demo-torch.local}}/demo-ext/",
            "versions": ">=1.0",
            "requires": ["demo-torch>=2.12,<2.13"],
            "local_labels": ["cpu", "cu130"],
        }
        write_manifest(m, "demo-ext", "index", ext)
        llama_url = index.links_url("cu130", "demo-llama")
        write_manifest(
            m, "demo-llama", "index", {"url": llama_url, "versions": ">=0.3.0", **cuda13}
        )
        yield GpuIndex(index=index, wheels={}, manifests=m)


def _check(v: dict[str, str], stderr: str) -> None:
    # Name flavour: the other distribution, not the plain name.
    assert v.get("demo-cuda-cu13") == "1.0", v
    assert "demo-cuda" not in v
    # Template page: computed from the demo-torch build chosen, and said so.
    assert v["demo-torch"] == "2.12.0+cu130"
    assert v["demo-ext"] == "1.0+pt212cu130"
    assert "torch-2.12.0+cu130/demo-ext/ (computed)" in stderr
    # Pattern: the newest release on the page, though the manifest lists none by one.
    assert v["demo-llama"] == "0.4.0"


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_each_flavour_form_installs(flavour_index: GpuIndex, tmp_path: Path, tool: str) -> None:
    venv = venv_for(tool, tmp_path / "venv")
    proc = install(tool, flavour_index, venv, *ASKED, target=CUDA13, check=True)
    _check(installed(venv / "bin" / "python"), proc.stderr)
