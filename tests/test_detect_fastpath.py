"""The warm and cold paths of ``detect --json`` print exactly what the full path prints.

``resolver-hook detect --json`` with a warm cache answers from the stored profile
without importing the profile model (``resolver_hook/ground/hostkey.py``). Each profile of the
table is stored in a cache, then printed by the program (the warm path) and by the
command line's own ``main`` (the full path, which reads the same cache through the
model); the bytes must be equal, and the warm path must really be taken. On a miss (or
with ``--no-cache``) the plain command runs detection without the command line; each
machine of a second table (fake NVML) is detected both ways and must print, and cache,
the same bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.ground import hostkey as _hostkey
from resolver_hook.ground.valueclass import replace
from resolver_hook.host import HostProfile, cache, parse_target
from resolver_hook.host.profile import NvidiaGpu, NvidiaInfo, Probe, RocmInfo
from tests.fake_nvml import fake_nvidia_smi
from tests.paths import child_env

DETECTED = HostProfile(
    os="linux",
    arch="x86_64",
    python="3.12",
    tags=("cp312-cp312-manylinux_2_39_x86_64", "cp312-abi3-manylinux_2_39_x86_64"),
    libc="glibc",
    libc_version="2.39",
    nvidia=NvidiaInfo(
        driver_version="580.65.06",
        cuda_version="13.0",
        gpus=(
            NvidiaGpu(index=0, name="NVIDIA B200", cc=(10, 0), memory_mib=183359, uuid="GPU-1"),
            NvidiaGpu(index=1, name="NVIDIA H100 80GB HBM3", cc=(9, 0)),
        ),
    ),
    probes=(Probe(name="nvml", found=True, detail="driver 580.65.06, 2 GPUs"),),
    notes=('a note with ünïcode and "quotes"',),
)

PROFILES = {
    "gpus": DETECTED,
    "no-gpu": replace(DETECTED, nvidia=None),
    "jetson": parse_target("linux-aarch64-py310-cuda12.6-sm87-l4t36.4"),
    "rocm": replace(DETECTED, nvidia=None, rocm=RocmInfo(version="6.4", gfx=("gfx942",))),
    "target": parse_target("linux-x86_64-py312-glibc2.39-cuda13.0-sm100"),
    "overridden": replace(DETECTED, overridden=("sm",), origin="detected"),
}

FULL_PATH = "from resolver_hook.cli import main; raise SystemExit(main())"
COMMAND = ["detect", "--json"]


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


def _store(folder: Path, profile: HostProfile, env: dict[str, str]) -> str:
    path = _hostkey.cache_file(env)
    key = _hostkey.cache_key(env)
    if path is None or key is None:
        pytest.skip("this system has no boot id, so nothing is cached (macOS, Windows)")
    cache.store(path, key, profile)
    return path


def test_profile_keys_are_the_models() -> None:
    assert tuple(DETECTED.to_dict()) == _hostkey.PROFILE_KEYS


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_warm_path_prints_what_the_full_path_prints(name: str, tmp_path: Path) -> None:
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")})
    _store(tmp_path, PROFILES[name], env)
    # -X importtime lists every module imported: the warm path must not load the model.
    warm = _run(
        [sys.executable, "-X", "importtime", "-m", "resolver_hook", "detect", "--json"], env
    )
    full = _run([sys.executable, "-c", FULL_PATH, *COMMAND], env)
    assert warm.returncode == full.returncode == 0, warm.stderr + full.stderr
    assert warm.stdout == full.stdout
    assert warm.stdout.startswith('{\n  "schema": ')
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.stderr.splitlines()}
    assert "resolver_hook.ground.hostkey" in imported
    assert not imported & {"resolver_hook.host.profile", "dataclasses", "packaging", "argparse"}


@pytest.mark.parametrize("flags", [[], ["--no-cache"]], ids=["warm", "cold"])
def test_the_plain_command_loads_neither_pathlib_nor_the_cache_module(
    flags: list[str], tmp_path: Path
) -> None:
    """The warm path and detection work on strings (os.path): on Python 3.11 pathlib
    imports urllib.parse and ipaddress, a few ms of a command that takes tens. A hit
    loads neither detection nor the model's cache module (detection imports that module
    at its top: 0.4 ms of its own, measured). The child runs without site (-S), given
    this process's sys.path, so that a .pth file of the environment importing pathlib at
    start-up cannot hide an import by the program."""
    env = child_env(
        {
            "RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
    )
    if not flags:
        _store(tmp_path, PROFILES["gpus"], env)
    argv = [*COMMAND, *flags]
    proc = _run([sys.executable, "-S", "-X", "importtime", "-m", "resolver_hook", *argv], env)
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    # The path under test was taken: warm answers from the cache, cold detects.
    assert ("resolver_hook.host.probes" in imported) == bool(flags)
    assert "resolver_hook.ground.hostkey" in imported
    assert "pathlib" not in imported
    if not flags:
        assert "resolver_hook.host.detect" not in imported
        assert "resolver_hook.host.cache" not in imported


def test_an_override_variable_takes_the_full_path(tmp_path: Path) -> None:
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")})
    _store(tmp_path, PROFILES["gpus"], env)
    assert _hostkey.cached_detect_json(["detect", "--json"], env) is not None
    env["RESOLVER_HOOK_OVERRIDE_SM"] = "12.0"
    assert _hostkey.cached_detect_json(["detect", "--json"], env) is None
    proc = _run([sys.executable, "-m", "resolver_hook", "detect", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    assert '"cc": "12.0"' in proc.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["detect"],
        ["detect", "--json", "--all-tags"],
        ["detect", "--json", "--no-cache"],
        ["--json", "detect"],
        ["plan", "--json"],
    ],
)
def test_only_the_plain_command_is_answered_warm(argv: list[str], tmp_path: Path) -> None:
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")})
    _store(tmp_path, PROFILES["gpus"], env)
    assert _hostkey.cached_detect_json(argv, env) is None


@pytest.mark.parametrize(
    "damage",
    ["other-keys", "not-a-dict", "world-writable", "other-key"],
)
def test_anything_unusual_takes_the_full_path(damage: str, tmp_path: Path) -> None:
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")})
    path = _store(tmp_path, PROFILES["gpus"], env)
    key = _hostkey.cache_key(env)
    assert key is not None
    if damage == "other-keys":
        cache._cache.write(path, key, {"os": "linux"})
    elif damage == "not-a-dict":
        cache._cache.write(path, key, ["linux"])
    elif damage == "world-writable":
        os.chmod(path, 0o666)
    else:
        cache._cache.write(path, {**key, "boot_id": "another boot"}, DETECTED.to_dict())
    assert _hostkey.cached_detect_json(["detect", "--json"], env) is None


# The cold path: the plain command on a miss (or with --no-cache) runs detection without
# the command line; what it prints, and the cache it leaves, are the full path's.
H100 = {"name": "NVIDIA H100 80GB HBM3", "cc": [9, 0], "mem": 85899345920, "uuid": "GPU-a"}
B200 = {"name": "NVIDIA B200", "cc": [10, 0], "mem": 192 * 2**30, "uuid": "GPU-b"}
MACHINES: dict[str, tuple[dict[str, object], dict[str, str]]] = {
    "gpus": ({"driver": "580.65.06", "cuda": 13000, "gpus": [H100, B200]}, {}),
    "no-gpu": ({"init_error": "NVML Shared Library Not Found"}, {}),
    "visible": ({"gpus": [H100, B200]}, {"CUDA_VISIBLE_DEVICES": "1"}),
    "none-visible": ({"gpus": [H100]}, {"CUDA_VISIBLE_DEVICES": "-1"}),
    "overridden": ({"gpus": [H100]}, {"RESOLVER_HOOK_OVERRIDE_SM": "12.0"}),
}


@pytest.mark.parametrize("name", sorted(MACHINES))
@pytest.mark.parametrize("flags", [[], ["--no-cache"]])
def test_cold_path_prints_what_the_full_path_prints(
    name: str, flags: list[str], tmp_path: Path
) -> None:
    nvml, extra = MACHINES[name]
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "a"), **extra}, fake_nvml=nvml)
    full_env = {**env, "RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "b")}
    argv = [*COMMAND, *flags]
    cold = _run([sys.executable, "-X", "importtime", "-m", "resolver_hook", *argv], env)
    full = _run([sys.executable, "-c", FULL_PATH, *argv], full_env)
    assert cold.returncode == full.returncode == 0, cold.stderr + full.stderr
    assert cold.stdout == full.stdout
    gpus = (json.loads(cold.stdout)["nvidia"] or {}).get("gpus", [])
    assert len(gpus) == {"gpus": 2, "visible": 1, "overridden": 1}.get(name, 0)
    imported = {line.rsplit("|", 1)[-1].strip() for line in cold.stderr.splitlines()}
    assert ("argparse" in imported) == (name == "overridden")  # overrides: the command line
    assert "resolver_hook.host.probes" in imported
    stored = [(tmp_path / d / "host-profile.json").is_file() for d in ("a", "b")]
    assert stored[0] == stored[1] == (not flags and name != "overridden")
    if stored[0]:
        assert (tmp_path / "a/host-profile.json").read_text() == (
            tmp_path / "b/host-profile.json"
        ).read_text()


def test_no_nvml_library_spares_the_binding(tmp_path: Path) -> None:
    """Without libnvidia-ml.so.1 nvidia-ml-py is not imported, nor ctypes (the library
    is looked for by ctypes' own dlopen call, without its types); the probe says what
    nvidia-ml-py's own nvmlInit says."""
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path)})
    env.pop("LD_LIBRARY_PATH", None)
    probe = subprocess.run(
        [sys.executable, "-c", "import ctypes; ctypes.CDLL('libnvidia-ml.so.1')"],
        capture_output=True,
        env=env,
        check=False,
    )
    if probe.returncode == 0:
        pytest.skip("this machine has the NVIDIA driver's NVML library")
    cold = _run([sys.executable, "-X", "importtime", "-m", "resolver_hook", *COMMAND], env)
    assert cold.returncode == 0, cold.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in cold.stderr.splitlines()}
    assert "pynvml" not in imported
    assert "ctypes" not in imported
    nvml = next(p for p in json.loads(cold.stdout)["probes"] if p["name"] == "nvidia-nvml")
    assert nvml["detail"] == "NVML init failed: NVML Shared Library Not Found"


def test_programs_not_on_path_are_not_started(tmp_path: Path) -> None:
    """With neither nvidia-smi nor rocm_agent_enumerator on PATH, detection starts no
    process (nor loads the runner) and says what starting them would have said."""
    env = child_env(
        {"RESOLVER_HOOK_CACHE_DIR": str(tmp_path), "PATH": str(tmp_path / "empty")},
        fake_nvml={"init_error": "NVML Shared Library Not Found"},
    )
    argv = [*COMMAND, "--no-cache"]
    cold = _run([sys.executable, "-X", "importtime", "-m", "resolver_hook", *argv], env)
    assert cold.returncode == 0, cold.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in cold.stderr.splitlines()}
    assert "resolver_hook.host.probes" in imported
    assert "resolver_hook.process.proc" not in imported
    probes = {p["name"]: p["detail"] for p in json.loads(cold.stdout)["probes"]}
    assert probes["nvidia-smi"] == "nvidia-smi not found"
    assert probes["rocm"] == "no AMD GPU (no KFD topology, no rocm_agent_enumerator)"
    # A program of that name on PATH is started (it runs as nvidia-smi would).
    (tmp_path / "empty").mkdir()
    fake_nvidia_smi(tmp_path / "empty", [{"name": "NVIDIA H100", "cc": (9, 0), "uuid": "GPU-a"}])
    found = _run([sys.executable, "-m", "resolver_hook", "detect", "--json", "--no-cache"], env)
    probes = {p["name"]: p["detail"] for p in json.loads(found.stdout)["probes"]}
    assert probes["nvidia-smi"] == "nvidia-smi: driver 580.95.05, 1 GPU(s)"


@pytest.mark.parametrize(
    ("argv", "collector"),
    [
        (["detect", "--json", "--no-cache"], False),
        (["detect", "--json"], False),  # a miss here: the cache folder is new
        (["detect"], True),  # the command line, which leaves the collector on
    ],
)
def test_detection_runs_without_the_cyclic_garbage_collector(
    tmp_path: Path, argv: list[str], collector: bool
) -> None:
    """The cold path ends when it prints; the collector's passes over the modules it
    imports free next to nothing, so it is off there (as for a plan), and only there."""
    child = (
        "import contextlib, gc, io, sys\n"
        f"sys.argv = ['resolver-hook', *{argv!r}]\n"
        "from resolver_hook._entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main()\n"
        "print(code, gc.isenabled())\n"
    )
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache")})
    done = _run([sys.executable, "-c", child], env)
    assert done.stdout.split() == ["0", str(collector)], done.stderr
