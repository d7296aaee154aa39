"""Issue 49, ``lock`` of an application whose dependency has a manifest: when uv's
resolution fails on that dependency, the error names it, who needs it and the rule of
its manifest that fails (not only uv's last line, which names the application)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.installenv import PY, GpuIndex, clean_env

SM120 = f"linux-x86_64-py{PY}-cuda13.0-sm120"
SM90 = f"linux-x86_64-py{PY}-cuda12.6-sm90"
MACHINE_120 = (
    f"Linux x86_64, Python {PY[0]}.{PY[1:]}, glibc 2.35, NVIDIA RTX 50xx, RTX PRO 6000 "
    "Blackwell (sm_120), driver CUDA 13.0"
)


def lock(gi: GpuIndex, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        RESOLVER_HOOK_OFFLINE="0",  # uv reads the loopback index
        UV_DEFAULT_INDEX=gi.simple,
        PIP_INDEX_URL=gi.simple,
    )
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", "lock", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=600, check=False,
    )  # fmt: skip


def _project(folder: Path) -> Path:
    """A local application that pins the CUDA 12.6 build of demo-gpu."""
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "myapp"\nversion = "0.1"\ndependencies = ["demo-gpu==1.0+cu126"]\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    return folder


@pytest.mark.parametrize("out", ["lock.txt", "pylock.toml"])
def test_a_dependency_whose_build_cannot_run_here_is_named_with_its_rule(
    gpu_index: GpuIndex, tmp_path: Path, out: str
) -> None:
    """app 1.0 (on the index) requires demo-gpu==1.0+cu126, whose kernels stop at sm_90."""
    proc = lock(gpu_index, "app", "--target", SM120, "-o", out, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    first, hint = proc.stderr.splitlines()
    assert first == (
        f"error: uv could not resolve the environment for {MACHINE_120}: app depends on "
        "demo-gpu==1.0+cu126, and demo-gpu==1.0+cu126 has no build that runs here: kernels "
        "sm_80, sm_86, sm_89, sm_90 do not run on RTX 50xx, RTX PRO 6000 Blackwell (sm_120); "
        "the nearest that does: demo-gpu==1.0+cu130"
    )
    assert hint.startswith("hint: a GPU of another family: H100, H200, GH200 (sm_90)")
    assert not (tmp_path / out).exists()


def test_a_dependency_the_requirements_do_not_name_is_named_with_the_fix(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """The build runs here, but only a package the requirements name is pinned from its
    manifest: uv, reading the index, cannot find demo-gpu's files. Named, it locks."""
    _project(tmp_path / "proj")
    proc = lock(gpu_index, "./proj", "--target", SM90, "-o", "lock.txt", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    first, hint = proc.stderr.splitlines()
    assert first.endswith(
        ": myapp depends on demo-gpu==1.0+cu126, a package with a manifest that the "
        "requirements do not name: its build for this machine (demo-gpu 1.0+cu126) is served "
        f"from {gpu_index.index.url}/files/demo_gpu-1.0+cu126-py3-none-any.whl, which uv is "
        "handed only for a package the plan pins"
    ), first
    assert hint == (
        "hint: add demo-gpu==1.0+cu126 to the requirements: the plan pins its build and "
        "the lock holds it"
    )
    # The local project itself has no file to hash.
    proc = lock(gpu_index, "./proj", "demo-gpu==1.0+cu126", "--target", SM90, "-o", "lock.txt",
                "--allow-unhashed", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "\ndemo-gpu @ " in (tmp_path / "lock.txt").read_text()


def test_a_dependency_that_needs_another_build_than_the_plan_pins_is_named(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """On an H100 with a CUDA 13 driver the plan pins demo-gpu's newest build, 1.0+cu130;
    app needs 1.0+cu126, which runs here too."""
    target = f"linux-x86_64-py{PY}-cuda13.0-sm90"
    proc = lock(gpu_index, "app", "demo-gpu", "--target", target, "-o", "lock.txt", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    first, hint = proc.stderr.splitlines()
    assert ": app depends on demo-gpu==1.0+cu126, and the plan pins demo-gpu 1.0+cu130 for " in (
        first
    )
    assert first.endswith("; demo-gpu==1.0+cu126 runs here as demo-gpu 1.0+cu126"), first
    assert hint == "hint: pin demo-gpu==1.0+cu126 in the requirements to lock the build app needs"
