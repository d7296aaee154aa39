"""Rules over release ranges end to end, with real pip (issue 40, Done when).

One loopback index (tests/wheelfactory.py) stands for PyTorch's: the plain builds on
the simple index (what pip alone would take), and per-label find-links pages holding
several releases of one label each. The manifest describes each label over a range of
releases, as the built-in torch.toml does, and lists no release one by one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.installenv import PY, Entry, GpuIndex, installed, make_venv, write_manifest
from tests.test_install import install
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
L40 = f"linux-x86_64-py{PY}-cuda12.8-sm89"
# The pages are read (from the loopback index only), as a plan online reads PyTorch's.
# Whole lines to compare: the refusals fit the width, 80 in a pipe.
ONLINE = {"RESOLVER_HOOK_OFFLINE": "0", "COLUMNS": "1000"}
LABELS = {"cu121": ("2.2.2",), "cu128": ("2.7.0", "2.7.1", "2.8.0"), "cu130": ("2.9.0",)}


@pytest.fixture(scope="module")
def torch_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    root = tmp_path_factory.mktemp("torch-index")
    out = root / "built"
    index = LoopbackIndex(root / "index")
    for v in ("2.2.2", "2.7.1", "2.8.0"):
        index.add(build_wheel(out, "torch", v))  # PyPI's own builds
    wheels = {}
    for label, versions in LABELS.items():
        for v in versions:
            wheel = build_wheel(out, "torch", f"{v}+{label}")
            index.add(wheel, simple=False, flavour=label)
            wheels[f"{v}+{label}"] = wheel
    with index.serving():
        m = root / "manifests"
        m.mkdir()

        def entry(label: str, versions: str, cuda: str, gpu: list[str]) -> Entry:
            url = index.links_url(label, "torch")
            return {"url": url, "versions": versions, "label": label, "cuda": cuda, "gpu": gpu}

        old = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
        new = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
        write_manifest(
            m,
            "torch",
            "index",
            entry("cu121", ">=2.1,<2.6", ">=12.0", old),
            entry("cu128", ">=2.7,<2.9", ">=12.0", new),
            entry("cu130", ">=2.9,<2.12", ">=13.0", new),
        )
        yield GpuIndex(index=index, wheels=wheels, manifests=m)


@pytest.mark.parametrize(("target", "version"), [(B200, "2.7.1+cu128"), (L40, "2.7.1+cu128")])
def test_a_pin_no_entry_lists_installs_its_labels_build(
    torch_index: GpuIndex, tmp_path: Path, target: str, version: str
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    proc = install("pip", torch_index, venv, "torch==2.7.1", target=target, env=ONLINE, check=True)
    assert installed(venv / "bin" / "python")["torch"] == version, proc.stderr


def test_an_explicit_label_that_cannot_run_is_refused_before_pip_runs(
    torch_index: GpuIndex, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    proc = install("pip", torch_index, venv, "torch==2.2.2+cu121", target=B200, env=ONLINE)
    assert proc.returncode == 1, proc.stderr
    assert "the nearest that does: torch==2.7.0+cu128" in proc.stderr
    assert "do not run on B200/GB200 (sm_100)" in proc.stderr
    assert "torch" not in installed(venv / "bin" / "python")


def test_a_wheel_url_is_refused_where_it_cannot_run_and_installed_where_it_does(
    torch_index: GpuIndex, tmp_path: Path
) -> None:
    url = torch_index.index.wheel_url(torch_index.wheels["2.9.0+cu130"])
    line = f"torch @ {url}"
    venv = tmp_path / "venv"
    make_venv(venv)
    refused = install("pip", torch_index, venv, line, target=L40, env=ONLINE)  # a CUDA 12.8 driver
    assert refused.returncode == 1, refused.stderr
    assert "cannot run on this machine" in refused.stderr
    assert "needs a driver with CUDA >=13.0" in refused.stderr
    assert "torch" not in installed(venv / "bin" / "python")
    kept = install("pip", torch_index, venv, line, target=B200, env=ONLINE, check=True)
    assert installed(venv / "bin" / "python")["torch"] == "2.9.0+cu130", kept.stderr


def test_strict_refuses_a_release_the_rules_cannot_judge(
    torch_index: GpuIndex, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    # 1.11 is in no range: unjudged on a GPU machine, and --strict refuses it.
    proc = install("pip", torch_index, venv, "torch==1.11.0", target=B200, flags=["--strict"])
    assert proc.returncode == 1, proc.stderr
    assert "error: torch: UNJUDGED" in proc.stderr
    assert "nothing was installed: --strict" in proc.stderr


def test_without_strict_an_unjudged_release_is_said_once_and_left_to_pip(
    torch_index: GpuIndex, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    proc = install("pip", torch_index, venv, "torch==1.11.0", target=B200)
    # The replica has no 1.11.0: pip's own refusal follows the warning.
    assert proc.returncode != 0
    assert "torch: UNJUDGED: which builds torch==1.11.0 has" in proc.stderr
    assert "UNJUDGED: UNJUDGED" not in proc.stderr
