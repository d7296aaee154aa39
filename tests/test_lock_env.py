"""`resolver-hook lock` as a lock (issue 45): output names and folders, hash-complete
lines, the whole environment pinned from the user's index, stable pins and ``--check``;
real uv and real pip against the loopback index of tests/installenv.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.installenv import PY, GpuIndex, clean_env

X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"  # demo-gpu/demo-idx cu130
ARM_L4 = f"linux-aarch64-py{PY}-cuda12.6-sm89"  # cu126


def lock(
    gi: GpuIndex, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    full = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests), RESOLVER_HOOK_ALLOW_INSECURE_URLS="1", **env
    )
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", "lock", *args],
        capture_output=True, text=True, env=full, cwd=cwd, timeout=300, check=False,
    )  # fmt: skip


# --- item 3: names and folders ---------------------------------------------------------


@pytest.mark.parametrize("name", ["env.pylock.toml", "lock.toml", "requirements.lock"])
def test_an_output_name_that_says_no_format_is_refused(
    gpu_index: GpuIndex, tmp_path: Path, name: str
) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200, "-o", name,
                cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: -o {name}: the name is neither a requirements file")
    assert "\nhint: name it " in proc.stderr
    assert "or give --format" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_format_says_what_the_name_does_not(gpu_index: GpuIndex, tmp_path: Path) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200,
                "--format", "requirements", "-o", "requirements.lock", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "demo-gpu @ " in (tmp_path / "requirements.lock").read_text()


def test_missing_parent_folders_are_made(gpu_index: GpuIndex, tmp_path: Path) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200, "--target", ARM_L4,
                "-o", "new/deeper/{target}.txt", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    made = sorted(p.name for p in (tmp_path / "new" / "deeper").iterdir())
    assert made == sorted([f"{X86_B200}.txt", f"{ARM_L4}.txt", "index.toml"])
