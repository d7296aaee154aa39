"""Issue 49, ``sync`` of a lock set: each machine gets its own class's lock (an H100 its
sm_90 lock, an RTX 50 its sm_120 lock, among sm_80 and sm_100 locks and the same GPUs'
locks for other platforms), found by detection (a fake NVML) as on the real machines; a
set with no lock for this platform installs nothing and names the nearest lock and the
rule it fails."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.installenv import PY, GpuIndex, clean_env, index_hook, installed, make_venv
from tests.paths import fake_nvml_env

SM90 = f"linux-x86_64-py{PY}-cuda12.6-sm90"
SM120 = f"linux-x86_64-py{PY}-cuda13.0-sm120"
SM100 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
SM80 = f"linux-x86_64-py{PY}-cuda12.6-sm80"
# The same GPUs on other platforms, listed first: a GH200 and a Windows RTX 50.
GH200 = f"linux-aarch64-py{PY}-cuda12.6-sm90"
WIN_SM120 = f"windows-x86_64-py{PY}-cuda13.0-sm120"

H100 = {"name": "NVIDIA H100 80GB HBM3", "cc": [9, 0], "memory": 80 << 30, "uuid": "GPU-h100"}
RTX5090 = {"name": "NVIDIA GeForce RTX 5090", "cc": [12, 0], "memory": 32 << 30, "uuid": "GPU-5090"}


def hook(
    gi: GpuIndex,
    *args: str,
    cache: Path,
    venv: Path | None = None,
    nvml: dict[str, Any] | None = None,
) -> subprocess.CompletedProcess[str]:
    extra = {
        "RESOLVER_HOOK_CACHE_DIR": str(cache),  # each machine detected afresh
        "RESOLVER_HOOK_OFFLINE": "0",  # uv reads the loopback index
    }
    if nvml is not None:
        extra.update(fake_nvml_env(nvml, env=clean_env()))
    return index_hook(gi, *args, venv=venv, **extra)


@pytest.fixture(scope="module")
def fleet(gpu_index: GpuIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fleet")
    targets = [a for t in (GH200, WIN_SM120, SM80, SM90, SM100, SM120) for a in ("--target", t)]
    proc = hook(gpu_index, "lock", "demo-gpu", "-o", f"{folder}/{{target}}.txt", *targets,
                cache=tmp_path_factory.mktemp("cache"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return folder


@pytest.mark.parametrize(
    ("nvml", "want"),
    [
        ({"driver": "580.95.05", "cuda": 13000, "gpus": [H100]}, (SM90, "1.0+cu126")),
        ({"driver": "560.35.03", "cuda": 12060, "gpus": [H100]}, (SM90, "1.0+cu126")),
        ({"driver": "580.95.05", "cuda": 13000, "gpus": [RTX5090]}, (SM120, "1.0+cu130")),
    ],
    ids=["h100-cuda13.0", "h100-cuda12.6", "rtx5090-cuda13.0"],
)
def test_sync_on_a_detected_machine_installs_its_own_class_lock(
    gpu_index: GpuIndex, fleet: Path, tmp_path: Path, nvml: dict[str, Any], want: tuple[str, str]
) -> None:
    lock, version = want
    make_venv(tmp_path / "venv")
    proc = hook(gpu_index, "sync", str(fleet), "--installer", "pip", venv=tmp_path / "venv",
                nvml=nvml, cache=tmp_path / "cache")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"resolver-hook: {lock}.txt (for " in proc.stderr
    assert installed(tmp_path / "venv" / "bin" / "python")["demo-gpu"] == version


ARM_GB200 = f"linux-aarch64-py{PY}-cuda13.0-sm100"
MAC = f"macos-arm64-py{PY}"
X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"


def test_sync_of_other_platforms_locks_installs_nothing_and_names_the_nearest(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """The locks' builds would run here (demo-gpu is a pure wheel, plainpkg has no
    manifest), but uv resolved each lock for another platform: none is this machine's.
    Each fails one rule; the nearest is the one of this OS and these GPUs, though the
    macOS lock comes first in the index."""
    folder = tmp_path / "locks"
    proc = hook(gpu_index, "lock", "demo-gpu ; sys_platform == 'linux'", "plainpkg",
                "-o", f"{folder}/{{target}}.txt", "--target", MAC, "--target", ARM_GB200,
                "--index-url", gpu_index.simple, cache=tmp_path / "cache")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    make_venv(tmp_path / "venv")
    before = installed(tmp_path / "venv" / "bin" / "python")
    proc = hook(gpu_index, "sync", str(folder), "--installer", "pip", "--target", X86_B200,
                venv=tmp_path / "venv", cache=tmp_path / "cache")  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert installed(tmp_path / "venv" / "bin" / "python") == before
    first, hint = proc.stderr.splitlines()
    assert first == (
        f"error: no lock in {folder} fits Linux x86_64, Python {PY[0]}.{PY[1:]}, glibc 2.35, "
        "NVIDIA B200/GB200 (sm_100), driver CUDA 13.0: the nearest, "
        f"{ARM_GB200}.txt (for Linux aarch64, Python {PY[0]}.{PY[1:]}, glibc 2.35, NVIDIA "
        "B200/GB200 (sm_100), driver CUDA 13.0), fails: the lock was resolved for Linux "
        "aarch64; this machine is Linux x86_64"
    )
    assert hint.startswith("hint: add a lock for this machine class: ")


def test_sync_with_uv_and_no_active_environment_installs_nowhere_uv_would_not(
    tmp_path: Path,
) -> None:
    """No virtual environment active, none in the folder, no --python: ``uv pip install
    -r`` refuses ("No virtual environment found"), and so must sync with uv. It handed uv
    the interpreter ``uv python find`` names (a system Python) as ``--python``, which
    makes uv install into it. The lock cannot resolve (--no-index, a name nothing
    serves), so nothing can be installed before the fix either."""
    folder = tmp_path / "locks"
    folder.mkdir()
    lock = folder / "cpu.txt"
    lock.write_text("--no-index\nrh-absent-package-r4b==1.0\n")
    sha = hashlib.sha256(lock.read_bytes()).hexdigest()
    (folder / "index.toml").write_text(
        f'schema = 1\n[[lock]]\nfile = "cpu.txt"\nsha256 = "{sha}"\n'
        f'target = "linux-x86_64-py{PY}"\nmachine = "cpu"\n'
    )
    work = tmp_path / "work"  # no .venv here or above it under tmp_path
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "sync", str(folder), "--installer", "uv",
         "--target", f"linux-x86_64-py{PY}"],
        capture_output=True, text=True, env=clean_env(tmp_path, UV_OFFLINE="1"), cwd=work,
        timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode != 0, proc.stderr
    assert "environment at:" not in proc.stderr, proc.stderr  # uv was pointed at one
    assert "No virtual environment found" in proc.stderr, proc.stderr
