"""``--verify-kernels`` with real pip: the wheel's own kernels read before it is installed.

Two wheels carry nvcc-built libraries (tests/cudawheels.py): ``kgood`` holds
``libkernels.so`` (SASS sm_90a, sm_100f, sm_120 + PTX compute_120), ``kbad`` holds
``libptx.so`` (SASS sm_80 + PTX compute_100f). Both manifests claim Blackwell GPUs; on
an RTX 50 (sm_120) the scan finds that kbad's kernels run on none of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.cudawheels import KERNELS, PTX
from tests.installenv import PY, make_venv, wheel_entry, write_manifest
from tests.test_install import hook, versions
from tests.wheelfactory import BuiltWheel, LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

RTX50 = f"linux-x86_64-py{PY}-cuda13.0-sm120"


@pytest.fixture(scope="module")
def kernel_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, LoopbackIndex]]:
    root = tmp_path_factory.mktemp("kernels")
    out = root / "built"
    wheels: dict[str, BuiltWheel] = {
        "kgood": build_wheel(out, "kgood", "1.0+cu130", binaries={"kgood/libkernels.so": KERNELS}),
        "kbad": build_wheel(out, "kbad", "1.0+cu130", binaries={"kbad/libptx.so": PTX}),
    }
    index = LoopbackIndex(root / "index")
    for w in wheels.values():
        index.add(w, simple=False)
    manifests = root / "manifests"
    manifests.mkdir()
    with index.serving():
        for name, w in wheels.items():
            write_manifest(
                manifests, name, "wheel", wheel_entry(index, w, ">=13.0", ["sm_100", "sm_120"])
            )
        yield manifests, index


def _run(
    kernel_index: tuple[Path, LoopbackIndex], venv: Path, tmp: Path, *names: str
) -> tuple[int, str]:
    manifests, index = kernel_index
    proc = hook(
        "pip",
        "--verify-kernels",
        "--target",
        RTX50,
        "install",
        "--index-url",
        index.simple_url,
        *names,
        venv=venv,
        manifests=manifests,
        env={"RESOLVER_HOOK_CACHE_DIR": str(tmp / "cache")},
    )
    return proc.returncode, proc.stderr


def test_a_wheel_whose_kernels_run_on_no_visible_gpu_is_refused(
    kernel_index: tuple[Path, LoopbackIndex], tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    before = versions(venv)
    code, err = _run(kernel_index, venv, tmp_path, "kbad")
    assert code == 1, err
    line = next(x for x in err.splitlines() if x.startswith("error: kbad-1.0+cu130"))
    assert "kbad/libptx.so carries " in line
    assert "none of which runs on sm_120" in line
    assert {"sm_80", "compute_100f"} <= set(
        line.split(" carries ")[1].split(", none")[0].split(", ")
    )
    assert "nothing was installed" in err
    assert versions(venv) == before


def test_the_file_scanned_is_the_file_installed(
    kernel_index: tuple[Path, LoopbackIndex], tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    code, err = _run(kernel_index, venv, tmp_path, "kgood")
    assert code == 0, err
    assert versions(venv)["kgood"] == "1.0+cu130"
    assert "kernels read: kgood 1.0+cu130 runs on every visible GPU" in err
    # Installed from the downloaded file itself (pip records where a wheel came from).
    site = next((venv / "lib").glob("python*/site-packages"))
    (info,) = site.glob("kgood-*.dist-info")
    url = unquote(json.loads((info / "direct_url.json").read_text())["url"])
    assert url.startswith("file://")
    assert url.endswith("/wheels/kgood-1.0+cu130-py3-none-any.whl")
    # The scan is cached by the file's sha256, private to this user.
    (entry,) = (tmp_path / "cache" / "kernel-scans").glob("*.json")
    assert entry.stat().st_mode & 0o777 == 0o600
    assert entry.name == f"{json.loads(entry.read_text())['sha256']}.json"
