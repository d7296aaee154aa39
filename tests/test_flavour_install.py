"""The three flavour forms end to end, with real pip and real uv.

One loopback index (tests/wheelfactory.py) serves: a name flavour (``demo-cuda`` is
installed as the distribution ``demo-cuda-cu13``), a page template over the coupled
build (``demo-ext``'s page is computed from the ``demo-torch`` build chosen), and a
version pattern (``demo-llama``: every release on its page, none listed one by one).
One install per installer covers all three, each checked on its own.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.installenv import PY, clean_env, installed, make_venv
from tests.test_install import hook
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

CUDA13 = f"linux-x86_64-py{PY}-cuda13.0-sm89"
UV = [sys.executable, "-m", "uv"]
ASKED = ("demo-cuda", "demo-torch", "demo-ext", "demo-llama")


@dataclass
class FlavourIndex:
    index: LoopbackIndex
    manifests: Path


@pytest.fixture(scope="module")
def flavour_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlavourIndex]:
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
        (m / "demo-cuda.toml").write_text(
            textwrap.dedent("""\
            schema = 1
            [package]
            name = "demo-cuda"

            [[index]]
            install = "demo-cuda-cu13"
            version = "1.0"
            cuda = ">=13.0"
            """)
        )
        (m / "demo-torch.toml").write_text(
            textwrap.dedent(f"""\
            schema = 1
            [package]
            name = "demo-torch"

            [[index]]
            url = "{index.links_url("cu130", "demo-torch")}"
            version = "2.12.0+cu130"
            cuda = ">=13.0"
            """)
        )
        (m / "demo-ext.toml").write_text(
            textwrap.dedent(f"""\
            schema = 1
            [package]
            name = "demo-ext"

            [[index]]
            url = "{index.url}/links/torch-{{demo-torch.minor}}.0+{{demo-torch.local}}/demo-ext/"
            versions = ">=1.0"
            requires = ["demo-torch>=2.12,<2.13"]
            local_labels = ["cpu", "cu130"]
            """)
        )
        (m / "demo-llama.toml").write_text(
            textwrap.dedent(f"""\
            schema = 1
            [package]
            name = "demo-llama"

            [[index]]
            url = "{index.links_url("cu130", "demo-llama")}"
            versions = ">=0.3.0"
            cuda = ">=13.0"
            """)
        )
        yield FlavourIndex(index=index, manifests=m)


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


def test_pip_installs_each_flavour_form(flavour_index: FlavourIndex, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    proc = hook(
        "pip",
        "--target",
        CUDA13,
        "install",
        "--index-url",
        flavour_index.index.simple_url,
        *ASKED,
        venv=venv,
        manifests=flavour_index.manifests,
        check=True,
    )
    _check(installed(venv / "bin" / "python"), proc.stderr)


def test_uv_installs_each_flavour_form(flavour_index: FlavourIndex, tmp_path: Path) -> None:
    venv = tmp_path / "uvenv"
    subprocess.run(
        [*UV, "venv", "-q", "--python", sys.executable, str(venv)], check=True, env=clean_env()
    )
    proc = hook(
        "uv",
        "--target",
        CUDA13,
        "pip",
        "install",
        "--index-url",
        flavour_index.index.simple_url,
        *ASKED,
        venv=venv,
        manifests=flavour_index.manifests,
        check=True,
    )
    _check(installed(venv / "bin" / "python"), proc.stderr)
