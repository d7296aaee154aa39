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


# --- item 4: hash-complete or refused --------------------------------------------------


def _gone_page_manifest(gi: GpuIndex, tmp_path: Path) -> Path:
    """demo-idx known only as a find-links page that answers 404."""
    path = tmp_path / "demo-idx.toml"
    path.write_text(
        'schema = 1\n[package]\nname = "demo-idx"\n[[index]]\n'
        f'url = "{gi.index.url}/links/gone/demo-idx/"\nversion = "2.0+cu130"\n'
    )
    return path


def test_an_unreadable_flavour_page_is_refused_naming_the_line(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    manifest = _gone_page_manifest(gpu_index, tmp_path)
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-idx", "demo-gpu", "--manifest", str(manifest),
                "--target", X86_B200, "-o", str(out), RESOLVER_HOOK_OFFLINE="")  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: 1 lock line without a sha256")
    assert f"\n  demo-idx==2.0+cu130 (for {X86_B200}): " in proc.stderr
    assert f"{gpu_index.index.url}/links/gone/demo-idx/" in proc.stderr
    assert "404" in proc.stderr
    assert "\nhint: run lock where those pages and files are reachable" in proc.stderr
    assert "--allow-unhashed" in proc.stderr
    assert not out.exists()


def test_allow_unhashed_writes_the_line_with_a_header_note(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    manifest = _gone_page_manifest(gpu_index, tmp_path)
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-idx", "demo-gpu", "--manifest", str(manifest),
                "--target", X86_B200, "-o", str(out), "--allow-unhashed",
                RESOLVER_HOOK_OFFLINE="")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert "# note: without a sha256 (--allow-unhashed): demo-idx==2.0+cu130" in lines
    assert "demo-idx==2.0+cu130" in lines
    gpu130 = gpu_index.wheels["gpu130"]
    [gpu] = [x for x in lines if x.startswith("demo-gpu @ ")]
    assert f"#sha256={gpu130.sha256}" in gpu  # pip and uv check a URL's own #sha256=


def test_a_wheel_without_sha256_in_its_manifest_is_hashed_at_lock_time(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    manifest = tmp_path / "demo-gpu.toml"
    wheel = gpu_index.wheels["gpu130"]
    manifest.write_text(
        'schema = 1\n[package]\nname = "demo-gpu"\n[[wheel]]\n'
        f'url = "{gpu_index.index.wheel_url(wheel)}"\n'
    )
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", "--manifest", str(manifest), "--target", X86_B200,
                "-o", str(out), RESOLVER_HOOK_OFFLINE="")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"demo-gpu @ {gpu_index.index.wheel_url(wheel)} --hash=sha256:{wheel.sha256}" in (
        out.read_text().splitlines()
    )


def test_offline_a_flavour_known_only_as_a_page_is_unhashed(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-idx", "--target", X86_B200, "-o", str(out), "--offline")
    assert proc.returncode == 1, proc.stderr
    assert f"demo-idx==2.0+cu130 (for {X86_B200}): --offline: known only as the page " in (
        proc.stderr
    )
    online = lock(gpu_index, "demo-idx", "--target", X86_B200, "-o", str(out),
                  RESOLVER_HOOK_OFFLINE="")  # fmt: skip
    assert online.returncode == 0, online.stderr
    idx130 = gpu_index.wheels["idx130"]
    assert f"#sha256={idx130.sha256}" in out.read_text()  # the page read, its file pinned
