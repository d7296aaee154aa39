"""Lock sets for machine classes: ``lock -o 'DIR/{target}.txt'`` writes an index, ``sync``
installs the lock of this machine's class, with real uv and real pip on a loopback index.

The classes: an sm_90 machine on a CUDA 12.6 driver (demo-gpu 1.0+cu126) and an sm_120
machine on CUDA 13.0 (demo-gpu 1.0+cu130); machines are given by --target.
"""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.ground.toml import loads as toml_loads
from tests.adversarial._procs import wait_for_file
from tests.installenv import (
    PY,
    GpuIndex,
    clean_env,
    installed,
    make_venv,
)
from tests.installenv import index_hook as hook

SM90 = f"linux-x86_64-py{PY}-cuda12.6-sm90"
SM120 = f"linux-x86_64-py{PY}-cuda13.0-sm120"
SM70 = f"linux-x86_64-py{PY}-cuda13.0-sm70"
SM90_NEW_DRIVER = f"linux-x86_64-py{PY}-cuda13.0-sm90"


@pytest.fixture(scope="module")
def lockset(gpu_index: GpuIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("locks")
    proc = hook(
        gpu_index, "lock", "demo-gpu", "-o", f"{folder}/{{target}}.txt",
        "--target", SM90, "--target", SM120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {folder}/index.toml" in proc.stdout
    return folder


def test_the_index_names_each_lock_its_hash_and_its_builds(lockset: Path) -> None:
    index = toml_loads((lockset / "index.toml").read_text())
    by_target = {lock["target"]: lock for lock in index["lock"]}
    assert set(by_target) == {SM90, SM120}
    for target, lock in by_target.items():
        assert lock["file"] == f"{target}.txt"
        assert lock["sha256"] == hashlib.sha256((lockset / lock["file"]).read_bytes()).hexdigest()
    (package,) = by_target[SM90]["package"]
    assert package["name"] == "demo-gpu"
    assert package["wheel"][0]["cuda"] == ">=12.6"
    assert by_target[SM120]["gpus"] == ["12.0"]


@pytest.mark.parametrize("tool", ["uv", "pip"])
@pytest.mark.parametrize("machine", [(SM90, "1.0+cu126"), (SM120, "1.0+cu130")])
def test_sync_installs_the_lock_of_the_machines_class(
    gpu_index: GpuIndex, lockset: Path, tmp_path: Path, tool: str, machine: tuple[str, str]
) -> None:
    machine, version = machine
    make_venv(tmp_path / "venv")
    proc = hook(
        gpu_index, "sync", str(lockset), "--installer", tool, "--target", machine,
        venv=tmp_path / "venv",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"resolver-hook: {machine}.txt (for " in proc.stderr
    assert installed(tmp_path / "venv" / "bin" / "python")["demo-gpu"] == version


def test_the_most_specific_of_two_fitting_locks_wins(
    gpu_index: GpuIndex, lockset: Path, tmp_path: Path
) -> None:
    make_venv(tmp_path / "venv")
    proc = hook(
        gpu_index, "sync", str(lockset), "--installer", "uv", "--target", SM90_NEW_DRIVER,
        venv=tmp_path / "venv",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"resolver-hook: {SM90}.txt (for " in proc.stderr
    assert "(2 locks fit; this one is the most specific: planned for this machine's GPUs" in (
        proc.stderr
    )
    assert installed(tmp_path / "venv" / "bin" / "python")["demo-gpu"] == "1.0+cu126"


def test_a_machine_no_lock_serves_is_refused_with_the_nearest(
    gpu_index: GpuIndex, lockset: Path, tmp_path: Path
) -> None:
    make_venv(tmp_path / "venv")
    before = installed(tmp_path / "venv" / "bin" / "python")
    proc = hook(gpu_index, "sync", str(lockset), "--target", SM70, venv=tmp_path / "venv")
    assert proc.returncode == 1
    assert "error: no lock in " in proc.stderr
    assert f"the nearest, {SM90}.txt" in proc.stderr or f"the nearest, {SM120}.txt" in proc.stderr
    assert "do not run on V100 (sm_70)" in proc.stderr
    assert "\nhint: add a lock for this machine class" in proc.stderr
    assert installed(tmp_path / "venv" / "bin" / "python") == before


def test_a_changed_lock_file_is_refused(gpu_index: GpuIndex, lockset: Path, tmp_path: Path) -> None:
    tampered = tmp_path / "locks"
    tampered.mkdir()
    for f in lockset.iterdir():
        (tampered / f.name).write_bytes(f.read_bytes())
    with (tampered / f"{SM120}.txt").open("a") as f:
        f.write("helperlib==2.0\n")
    make_venv(tmp_path / "venv")
    before = installed(tmp_path / "venv" / "bin" / "python")
    proc = hook(gpu_index, "sync", str(tampered), "--target", SM120, venv=tmp_path / "venv")
    assert proc.returncode == 1
    assert f"{SM120}.txt: sha256 " in proc.stderr
    assert "the lock file changed after it was written" in proc.stderr
    assert installed(tmp_path / "venv" / "bin" / "python") == before


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("schema = 1\n", "not a resolver-hook lock index"),
        ('schema = 1\n[[lock]]\nfile = "../x"\nsha256 = "0"\ntarget = "t"\nmachine = "m"\n',
         "is not a file name in"),
        ("[[[", "not TOML"),
    ],
)  # fmt: skip
def test_a_bad_index_is_one_error(
    gpu_index: GpuIndex, tmp_path: Path, text: str, words: str
) -> None:
    (tmp_path / "index.toml").write_text(text)
    proc = hook(gpu_index, "sync", str(tmp_path), "--target", SM90)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert words in proc.stderr
    assert "Traceback" not in proc.stderr


def test_ctrl_c_during_sync_reaches_the_installer_and_leaves_nothing(
    gpu_index: GpuIndex, lockset: Path, tmp_path: Path
) -> None:
    """The installer (a stand-in that waits) gets the SIGINT; sync exits 130 and leaves no
    temporary file behind."""
    pidfile, got = tmp_path / "installer.pid", tmp_path / "installer.got"
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(
        f'#!/bin/sh\ntrap \'echo INT > "{got}"; exit 7\' INT\necho $$ > "{pidfile}"\n'
        "while :; do sleep 0.1; done\n"
    )
    python.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = clean_env(tmp, VIRTUAL_ENV=str(tmp_path / "venv"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "resolver_hook", "sync", str(lockset), "--installer", "pip",
         "--target", SM90, "--allow-insecure-urls"],  # the lock pins the loopback index
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_file(pidfile)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert got.read_text().strip() == "INT"
    assert list(tmp.iterdir()) == []


def test_a_pylock_set_is_indexed_and_synced_with_uv(gpu_index: GpuIndex, tmp_path: Path) -> None:
    folder = tmp_path / "locks"
    folder.mkdir()
    proc = hook(
        gpu_index, "lock", "demo-gpu", "plainpkg", "-o", f"{folder}/pylock.{{target}}.toml",
        "--target", SM90, "--target", SM120, "--index-url", gpu_index.simple,
        RESOLVER_HOOK_OFFLINE="0",  # the lock reads the loopback index
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    files = sorted(p.name for p in folder.iterdir())
    names = [f"pylock.{t.replace('.', '_')}.toml" for t in (SM90, SM120)]
    assert files == sorted(["index.toml", *names])
    make_venv(tmp_path / "venv")
    proc = hook(gpu_index, "sync", str(folder), "--installer", "uv", "--target", SM120,
                venv=tmp_path / "venv")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = installed(tmp_path / "venv" / "bin" / "python")
    assert (found["demo-gpu"], found["plainpkg"]) == ("1.0+cu130", "1.0")


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_install_with_lock_is_sync_with_that_installer(
    gpu_index: GpuIndex, lockset: Path, tmp_path: Path, tool: str
) -> None:
    make_venv(tmp_path / "venv")
    words = ["install"] if tool == "pip" else ["pip", "install"]
    proc = hook(gpu_index, tool, "--lock", str(lockset), "--target", SM120, *words,
                venv=tmp_path / "venv")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"resolver-hook: {SM120}.txt (for " in proc.stderr
    assert installed(tmp_path / "venv" / "bin" / "python")["demo-gpu"] == "1.0+cu130"
    proc = hook(gpu_index, tool, "--lock", str(lockset), *words, "numpy", venv=tmp_path / "venv")
    assert proc.returncode == 2
    assert "--lock installs the lock set's file, so nothing else can follow: numpy" in proc.stderr
