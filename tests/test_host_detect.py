"""Overrides, targets, saved profiles and the detect command end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.host import HostProfile, apply_overrides, parse_target, resolve_machine
from resolver_hook.host.detect import detect, env_overrides
from tests.paths import child_env


def run_cli(
    *args: str, env: dict[str, str] | None = None, fake_nvml: dict | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *args],
        capture_output=True,
        text=True,
        env=child_env(env, fake_nvml=fake_nvml),
        timeout=60,
        check=False,
    )


def test_detect_json_on_this_machine() -> None:
    """This CI machine has no NVIDIA GPU: the report says so, with the reason."""
    proc = run_cli("detect", "--json", fake_nvml={"init_error": "NVML Shared Library Not Found"})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["os"] == "linux"
    assert data["arch"] in ("x86_64", "aarch64")
    assert data["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert data["libc"] == "glibc"
    assert data["libc_version"].startswith("2.")
    assert data["tags"][0].startswith(f"cp{sys.version_info[0]}{sys.version_info[1]}-")
    assert data["nvidia"] is None
    nvml = next(p for p in data["probes"] if p["name"] == "nvidia-nvml")
    assert nvml == {
        "name": "nvidia-nvml",
        "found": False,
        "detail": "NVML init failed: NVML Shared Library Not Found",
    }


def test_detect_real_probes_say_why() -> None:
    """Without any fake: whatever this machine lacks, the reason is in the report."""
    proc = run_cli("detect", "--json")
    data = json.loads(proc.stdout)
    if data["nvidia"] and data["nvidia"]["gpus"]:
        pytest.skip("this machine has a real NVIDIA GPU")
    assert [p["detail"] for p in data["probes"] if p["name"].startswith("nvidia")]


def test_env_overrides_give_a_gpu() -> None:
    proc = run_cli(
        "detect",
        "--json",
        env={"RESOLVER_HOOK_OVERRIDE_CUDA": "13.0", "RESOLVER_HOOK_OVERRIDE_SM": "12.1"},
        fake_nvml={"init_error": "NVML Shared Library Not Found"},
    )
    data = json.loads(proc.stdout)
    assert data["nvidia"]["cuda_version"] == "13.0"
    assert [g["cc"] for g in data["nvidia"]["gpus"]] == ["12.1"]
    assert data["overridden"] == ["cuda", "sm"]


def test_target_gives_same_accelerators_for_aarch64() -> None:
    by_env = run_cli(
        "detect",
        "--json",
        env={"RESOLVER_HOOK_OVERRIDE_CUDA": "13.0", "RESOLVER_HOOK_OVERRIDE_SM": "12.1"},
    )
    by_target = run_cli("detect", "--json", "--target", "linux-aarch64-py312-cuda13.0-sm121")
    env_nv, target_nv = json.loads(by_env.stdout)["nvidia"], json.loads(by_target.stdout)["nvidia"]
    assert env_nv["cuda_version"] == target_nv["cuda_version"] == "13.0"
    assert [g["cc"] for g in env_nv["gpus"]] == [g["cc"] for g in target_nv["gpus"]] == ["12.1"]
    target = json.loads(by_target.stdout)
    assert target["arch"] == "aarch64"
    assert target["tags"][0] == "cp312-cp312-manylinux_2_35_aarch64"


def test_fake_nvml_end_to_end() -> None:
    gpus = [
        {"name": "NVIDIA H100", "cc": [9, 0], "mem": 85899345920, "uuid": "GPU-1"},
        {"name": "NVIDIA GB10", "cc": [12, 1], "uuid": "GPU-2"},
    ]
    proc = run_cli(
        "detect", fake_nvml={"cuda": 12090, "gpus": gpus}, env={"CUDA_VISIBLE_DEVICES": "1"}
    )
    assert proc.returncode == 0, proc.stderr
    assert "driver 580.95.05, driver CUDA 12.9" in proc.stdout
    assert "gpu 1:   NVIDIA GB10, compute capability 12.1 (sm_121)" in proc.stdout
    assert "H100" not in proc.stdout.split("probe:")[0]


def test_flag_beats_env_beats_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "12.8")
    assert detect().cuda == (12, 8)
    p = resolve_machine(flags={"cuda": "13.1"})
    assert p.cuda == (13, 1)
    assert "cuda" in p.overridden


def test_empty_cuda_override_means_no_gpu() -> None:
    base = parse_target("linux-x86_64-py312-cuda13.0-sm100")
    p = apply_overrides(
        base,
        {"cuda": ("", "RESOLVER_HOOK_OVERRIDE_CUDA"), "sm": ("9.0", "RESOLVER_HOOK_OVERRIDE_SM")},
    )
    assert p.nvidia is None
    assert p.gpus == ()
    assert "RESOLVER_HOOK_OVERRIDE_CUDA is empty" in p.nvidia_reason


def test_arch_and_glibc_overrides_recompute_tags() -> None:
    base = parse_target("linux-x86_64-py312-glibc2.39")
    p = apply_overrides(
        base,
        env_overrides(
            {"RESOLVER_HOOK_OVERRIDE_ARCH": "arm64", "RESOLVER_HOOK_OVERRIDE_GLIBC": "2.28"}
        ),
    )
    assert p.arch == "aarch64"
    assert p.libc_version == "2.28"
    assert p.tags[0] == "cp312-cp312-manylinux_2_28_aarch64"
    assert "cp312-cp312-manylinux2014_aarch64" in p.tags
    assert not any("x86_64" in t or "2_29" in t for t in p.tags)
    assert p.overridden == ("arch", "glibc")


@pytest.mark.parametrize(
    ("spec", "os_name", "arch", "python", "first_tag"),
    [
        (
            "linux-aarch64-py312-glibc2.39-cuda13.0-sm121",
            "linux",
            "aarch64",
            "3.12",
            "cp312-cp312-manylinux_2_39_aarch64",
        ),
        ("macos-arm64-py312", "macos", "aarch64", "3.12", "cp312-cp312-macosx_14_0_arm64"),
        ("windows-x86_64-py311", "windows", "x86_64", "3.11", "cp311-cp311-win_amd64"),
        (
            "linux-amd64-cp310-rocm6.3",
            "linux",
            "x86_64",
            "3.10",
            "cp310-cp310-manylinux_2_35_x86_64",
        ),
    ],
)
def test_targets(spec: str, os_name: str, arch: str, python: str, first_tag: str) -> None:
    p = parse_target(spec)
    assert (p.os, p.arch, p.python, p.tags[0]) == (os_name, arch, python, first_tag)
    assert "py3-none-any" in p.tags


def test_target_several_gpus() -> None:
    p = parse_target("linux-x86_64-py312-cuda12.8-sm90,sm121")
    assert p.gpu_ccs == ((9, 0), (12, 1))
    assert p.cuda == (12, 8)


def test_profile_round_trip(tmp_path: Path) -> None:
    p = apply_overrides(
        parse_target("linux-aarch64-py312-cuda13.0-sm121"), {"glibc": ("2.39", "--glibc")}
    )
    again = HostProfile.from_dict(json.loads(json.dumps(p.to_dict())), where="x")
    assert again.replace(origin=p.origin) == p
    path = tmp_path / "spark.json"
    path.write_text(json.dumps(p.to_dict()))
    proc = run_cli("detect", "--json", "--profile", str(path))
    assert json.loads(proc.stdout)["nvidia"] == p.to_dict()["nvidia"]


BAD_INPUTS = [
    (["--target", "garbage"], "--target 'garbage': expected OS-ARCH first"),
    (["--target", "beos-x86_64"], "OS 'beos' is not linux, macos or windows"),
    (["--target", "linux-z80"], "CPU arch 'z80' is not known"),
    (["--target", "linux-x86_64-py3x"], "field 'py3x' is not pyXY"),
    (["--target", "linux-x86_64-cuda13.x"], "field 'cuda13.x' is not pyXY"),
    (["--target", "linux-x86_64-sm9x"], "field 'sm9x'"),
    (["--target", "macos-arm64-cuda13.0"], "NVIDIA CUDA does not exist on macOS"),
    (["--cuda", "thirteen"], "--cuda: 'thirteen' is not a driver CUDA version"),
    (["--sm", "12"], "--sm: '12' is not a comma list of compute capabilities"),
    (["--arch", "pdp11"], "--arch: 'pdp11' is not a CPU architecture"),
    (["--glibc", "3.1"], "--glibc: '3.1' is not a glibc version"),
    (["--target", "macos-arm64-py312", "--glibc", "2.39"], "--glibc: glibc is Linux's C library"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_is_one_error_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["detect", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err.splitlines()[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"os": "linux", "arch": "x86_64", "python": "3.12"', "not valid JSON"),
        ("[1, 2]", "(top): expected an object, got list"),
        ('{"os": "linux", "arch": "x86_64"}', "python: missing"),
        ('{"os": "linux", "arch": "x86_64", "python": 3.12}', "python: expected str, got float"),
        ('{"os": "plan9", "arch": "x86_64", "python": "3.12"}', "os: 'plan9' is not one of"),
        (
            '{"os": "linux", "arch": "x86_64", "python": "3.12", '
            '"nvidia": {"gpus": [{"cc": "x"}]}}',
            "nvidia.gpus[0].cc:",
        ),
        (
            '{"os": "linux", "arch": "x86_64", "python": "3.12", '
            '"nvidia": {"cuda_version": "new"}}',
            "nvidia.cuda_version: 'new' is not a version",
        ),
        (
            '{"os": "linux", "arch": "x86_64", "python": "3.12", "schema": 9}',
            "unsupported version 9",
        ),
        # Wheel tags are computed from libc_version when the file lists none.
        (
            '{"os": "linux", "arch": "x86_64", "python": "3.12", "libc_version": "abc"}',
            "libc_version: 'abc' is not a version like 2.39",
        ),
        (
            '{"os": "linux", "arch": "x86_64", "python": "3.12", '
            '"libc": "musl", "libc_version": "1"}',
            "libc_version: '1' is not a version like 2.39",
        ),
    ],
)
def test_bad_profile_file(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    assert main(["detect", "--profile", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"error: --profile {path}: ")
    assert message in err


def test_missing_profile_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--profile", "/nonexistent/p.json"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_nonsense_env_override(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "twelve")
    assert main(["detect"]) == 2
    assert capsys.readouterr().err.startswith("error: RESOLVER_HOOK_OVERRIDE_SM: 'twelve'")


def test_usage_error_from_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["detect", "--bogus"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("error: unrecognized arguments: --bogus")


def test_usage_error_class() -> None:
    assert issubclass(UsageError, ValueError)


def test_machine_options_before_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`resolver-hook --target SPEC pip install ...` reads as `pip --target SPEC install`."""
    assert main(["--target", "linux-aarch64-py312-cuda13.0-sm121", "detect", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["arch"] == "aarch64"
    assert main(["--target", "linux-x86_64-py312-cuda12.6-sm120", "plan", "tilert"]) == 1


def test_a_target_names_a_jetson_by_its_l4t_release() -> None:
    profile = parse_target("linux-aarch64-py310-cuda12.6-sm87-l4t36.4")
    assert profile.l4t == "36.4"
    assert profile.l4t_major == 36
    assert "Jetson L4T 36.4" in profile.describe()
    again = HostProfile.from_dict(profile.to_dict())
    assert again.l4t == "36.4"


@pytest.mark.parametrize("spec", ["linux-x86_64-l4t36.4", "windows-arm64-l4t36"])
def test_l4t_is_refused_off_linux_aarch64(spec: str) -> None:
    with pytest.raises(UsageError, match="Linux aarch64 only"):
        parse_target(spec)
