"""``resolver-hook doctor``: installed packages against the machine, the detection report.

Machines are emulated with targets, overrides or the fake NVML module; environments with
folders of ``.dist-info`` directories or with a fake ``--python`` (a shell script that
prints what the real listing script prints).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.host import parse_target
from resolver_hook.install.doctor import check_installed
from resolver_hook.install.installed import (
    Installed,
    archive_sha256,
    environment_of,
    this_environment,
)
from resolver_hook.manifest import parse_manifest
from tests.clirun import cli as run
from tests.frozen import frozen_manifests
from tests.paths import FAKE_PYNVML, REPO, child_env

# Rule tests resolve against frozen fixtures, not the shipped data (tests/frozen.py).
BUILTIN = frozen_manifests()
CU126 = "torch 2.13.0+cu126 (download.pytorch.org/whl/cu126/torch/)"
CU130 = "torch 2.13.0+cu130 (download.pytorch.org/whl/cu130/torch/)"
# RTX 5090 / RTX PRO 6000 Blackwell: CC 12.0 (docs/facts.md section 1).
RTX5090 = {
    "name": "NVIDIA GeForce RTX 5090",
    "cc": [12, 0],
    "mem": 32 * 1024**3,
    "uuid": "GPU-dddd4444-0000-0000-0000-000000000000",
}


def inst(name: str, version: str, *tags: str, sha256: str | None = None) -> Installed:
    return Installed(
        name=canonicalize_name(name), display_name=name, version=version, tags=tags, sha256=sha256
    )


def dist_info(root: Path, name: str, version: str, *tags: str) -> None:
    d = root / f"{name}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if tags:
        (d / "WHEEL").write_text("Wheel-Version: 1.0\n" + "".join(f"Tag: {t}\n" for t in tags))


def fake_python(
    tmp_path: Path,
    dists: list[dict[str, Any]] | None = None,
    *,
    body: str | None = None,
    python: str = "3.12",
) -> str:
    """A stand-in interpreter: prints the JSON the listing script would print."""
    answer = json.dumps(
        {
            "python": python,
            "implementation": "cpython",
            "executable": "/venv/bin/python",
            "prefix": "/venv",
            "distributions": dists or [],
        }
    )
    path = tmp_path / "venv-python"
    # Builtins only: some tests run it with PATH=/nonexistent.
    path.write_text("#!/bin/sh\n" + (body if body is not None else f"echo '{answer}'\n"))
    path.chmod(0o755)
    return str(path)


# --- the verdicts (pure) -------------------------------------------------------------------


def verdict(target: str, *installed: Installed) -> dict[str, Any]:
    checks = check_installed(list(installed), BUILTIN, parse_target(target))
    return {c.display_name: c for c in checks}


def test_cu126_torch_on_blackwell_does_not_fit_and_the_fix_picks_cu130() -> None:
    # cu126 wheels carry SASS for 5.0-9.0 and no PTX: nothing runs on CC 12.0.
    c = verdict(
        "linux-x86_64-py312-glibc2.39-cuda13.0-sm120",
        inst("torch", "2.13.0+cu126"),
        inst("numpy", "2.3.0"),
    )
    assert list(c) == ["torch"]  # numpy has no manifest: not checked
    torch = c["torch"]
    assert (torch.status, torch.flavour) == ("fail", CU126)
    assert torch.summary == (
        "torch 2.13.0+cu126: kernels sm_50, sm_60, sm_70, sm_75, sm_80, "
        "sm_86, sm_90 do not run on RTX 50xx, RTX PRO 6000 Blackwell "
        "(sm_120)"
    )
    assert torch.fix == "resolver-hook pip install --force-reinstall torch (picks 2.13.0+cu130)"
    assert torch.fitting == (CU130,)


@pytest.mark.parametrize(
    ("target", "installed", "status", "words"),
    [
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda12.6-sm89",
            "2.13.0+cu126",
            "ok",
            "fits this machine",
            id="cu126-on-ada",
        ),
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda13.0-sm90",
            "2.13.0+cu130",
            "ok",
            "fits this machine",
            id="cu130-on-hopper",
        ),
        # cu130 needs a driver with CUDA >= 13.0 (driver >= 580, docs/facts.md section 1).
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda12.8-sm90",
            "2.13.0+cu130",
            "fail",
            "needs a driver with CUDA >=13.0 (driver 580 or newer); this driver has CUDA 12.8",
            id="cu130-on-old-driver",
        ),
        # torch cu126 on a machine with no GPU imports and runs, on the CPU: warn.
        pytest.param(
            "linux-x86_64-py312-glibc2.39",
            "2.13.0+cu126",
            "warn",
            "a GPU build on a machine without a GPU: it runs on the CPU only",
            id="cuda-build-without-gpu",
        ),
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda13.0-sm90",
            "2.13.0+cpu",
            "warn",
            "a build without GPU support on a machine with an NVIDIA GPU: it runs on the CPU only",
            id="cpu-build-on-gpu",
        ),
        pytest.param(
            "linux-x86_64-py312-glibc2.39",
            "2.13.0+cpu",
            "ok",
            "fits this machine",
            id="cpu-build-without-gpu",
        ),
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda13.0-sm90",
            "2.12.0+cu126",
            "unknown",
            "not a build that torch's manifest (built-in (torch.toml)) lists",
            id="unknown-version",
        ),
        # PyPI's plain torch 2.13.0 on Linux: the manifest lists 2.13.0 for macOS only.
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda13.0-sm90",
            "2.13.0",
            "unknown",
            "lists 2.13.0 only for other platforms or Pythons",
            id="other-platform",
        ),
    ],
)
def test_verdicts(target: str, installed: str, status: str, words: str) -> None:
    torch = verdict(target, inst("torch", installed))["torch"]
    assert torch.status == status
    assert words in torch.summary, torch.summary


def test_unknown_lists_what_fits_and_fixes_with_a_plan() -> None:
    torch = verdict("linux-x86_64-py312-glibc2.39-cuda13.0-sm90", inst("torch", "2.12.0+cu126"))[
        "torch"
    ]
    assert torch.fitting == (CU130, CU126)
    assert torch.fix == "resolver-hook pip install --force-reinstall torch (picks 2.13.0+cu130)"


def test_cpu_build_where_no_gpu_build_fits_offers_no_reinstall() -> None:
    # Driver CUDA 11.8: neither cu126 (>= 12.0) nor cu130 runs; the CPU build is all there is.
    torch = verdict("linux-x86_64-py312-glibc2.39-cuda11.8-sm90", inst("torch", "2.13.0+cpu"))[
        "torch"
    ]
    assert torch.status == "warn"
    # The computed hint: a newer driver gets a GPU build.
    assert torch.fix == (
        "no build of torch fits this machine (see 'resolver-hook explain torch'); "
        "a driver of 525.60.13 or newer (CUDA 12.0) gets torch 2.13.0+cu126"
    )


def test_coupled_build_for_another_torch_fails_and_the_fix_keeps_them_together() -> None:
    c = verdict(
        "linux-x86_64-py312-glibc2.39-cuda13.0-sm120",
        inst("torch", "2.13.0+cu126"),
        inst("torchvision", "0.28.0+cu130"),
        inst("flash-attn", "2.8.3+cu126torch2.13", "cp312-cp312-manylinux_2_28_x86_64"),
    )
    assert c["torchvision"].status == "fail"
    assert c["torchvision"].summary == (
        "torchvision 0.28.0+cu130: needs torch==2.13.0+cu130; installed torch 2.13.0+cu126"
    )
    assert c["torchvision"].fix == (
        "resolver-hook pip install --force-reinstall torch (picks torch 2.13.0+cu130)"
    )
    # flash-attn's compute_80 PTX runs on sm_120 by JIT; but reinstalling torch alone would
    # break its coupling, so torch's fix takes it along.
    assert c["flash-attn"].status == "ok"
    assert c["torch"].fix == (
        "resolver-hook pip install --force-reinstall torch flash-attn "
        "(picks torch 2.13.0+cu130, flash-attn 2.8.3+cu130torch2.13)"
    )


@pytest.mark.parametrize(
    ("tags", "status"),
    [
        pytest.param(("cp312-cp312-linux_x86_64",), "ok", id="the-sm120-wheel"),
        pytest.param(("cp312-cp312-manylinux_2_28_x86_64",), "fail", id="the-sm90-wheel"),
        pytest.param((), "ok", id="no-WHEEL-file-best-of-both"),
    ],
)
def test_wheel_flavour_is_found_by_version_and_wheel_tags(
    tags: tuple[str, ...], status: str
) -> None:
    """Two wheels of one version for different GPUs: the installed WHEEL tags tell which."""
    manifest = parse_manifest(
        {
            "package": {"name": "kern"},
            "wheel": [
                {
                    "url": "https://example.org/kern-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                    "gpu": ["sm_90"],
                },
                {
                    "url": "https://example.org/kern-1.0-cp312-cp312-linux_x86_64.whl",
                    "gpu": ["sm_120"],
                },
            ],
        }
    )
    (kern,) = check_installed(
        [inst("kern", "1.0", *tags)],
        {"kern": manifest},
        parse_target("linux-x86_64-py312-glibc2.39-cuda13.0-sm120"),
    )
    assert kern.status == status
    platform = "manylinux_2_28_x86_64" if status == "fail" else "linux_x86_64"
    assert kern.flavour == f"kern 1.0 cp312 {platform}"


def test_another_python_gets_its_own_tags(tmp_path: Path) -> None:
    """An environment of Python 3.9: torch 2.13 has no build for it."""
    env = environment_of(
        fake_python(tmp_path, [{"name": "torch", "version": "2.13.0+cu126"}], python="3.9")
    )
    (torch,) = check_installed(
        env, BUILTIN, parse_target("linux-x86_64-py312-glibc2.39-cuda12.6-sm89")
    )
    assert torch.status == "unknown"
    assert torch.summary.endswith("lists 2.13.0+cu126 only for other platforms or Pythons")


# --- reading environments --------------------------------------------------------------------


def test_dist_info_folders(tmp_path: Path) -> None:
    dist_info(tmp_path, "torch", "2.13.0+cu126", "cp312-cp312-manylinux_2_28_x86_64")
    dist_info(tmp_path, "Flash_Attn", "2.8.3")
    (tmp_path / "broken-1.0.dist-info").mkdir()  # no METADATA: skipped, not a crash
    env = this_environment(path=[str(tmp_path)])
    assert [(d.name, d.version, d.tags) for d in env.distributions] == [
        ("flash-attn", "2.8.3", ()),
        ("torch", "2.13.0+cu126", ("cp312-cp312-manylinux_2_28_x86_64",)),
    ]


def test_this_interpreter_and_the_listing_script_agree() -> None:
    """The stdlib script run by a real interpreter (this one) lists what importlib sees."""
    here = {str(d.name): d.version for d in this_environment().distributions}
    there = environment_of(sys.executable)
    assert there.python == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert there.executable
    assert "packaging" in here
    assert {str(d.name): d.version for d in there.distributions}["packaging"] == here["packaging"]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        pytest.param("echo boom >&2; exit 3\n", "listing its packages failed: boom", id="fails"),
        pytest.param("echo 'Python 2.7'\n", "unexpected answer: not JSON", id="not-json"),
        pytest.param(
            'echo \'{"python": "3.12", "executable": "/p"}\'\n',
            "'distributions' missing or not a list",
            id="no-list",
        ),
        pytest.param(
            'echo \'{"python": "three", "executable": "/p", "distributions": []}\'\n',
            "python 'three' is not a version",
            id="bad-version",
        ),
    ],
)
def test_other_python_failures_are_reasons(tmp_path: Path, body: str, error: str) -> None:
    python = fake_python(tmp_path, body=body)
    with pytest.raises(OperationalError) as info:
        environment_of(python)
    assert info.value.message.startswith(f"--python {python}: ")
    assert error in info.value.message


def test_other_python_that_hangs_times_out(tmp_path: Path) -> None:
    python = fake_python(tmp_path, body="exec sleep 30\n")
    with pytest.raises(OperationalError, match=r"no answer after 0\.3 s"):
        environment_of(python, timeout=0.3)


def test_other_python_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        environment_of(str(tmp_path / "nope"))
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(UsageError, match="not executable"):
        environment_of(str(plain))


# --- the command line, in process (overrides emulate the machine) --------------------------


TORCH_CU126 = [
    {"name": "torch", "version": "2.13.0+cu126", "tags": []},
    {"name": "numpy", "version": "2.3.0", "tags": []},
]


def test_cli_blackwell_with_cu126_exits_1_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "13.0")
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "12.0")
    python = fake_python(tmp_path, TORCH_CU126)
    code, out, err = run(capsys, "doctor", "--python", python)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert (
        "fail    torch 2.13.0+cu126: kernels sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, "
        "sm_90 do not run on RTX 50xx, RTX PRO 6000 Blackwell (sm_120)" in lines
    )
    assert f"        installed build: {CU126}" in lines
    # The fix installs into the environment that was checked (--python), through uv.
    assert (
        f"        fix: resolver-hook uv pip install --python {python} --force-reinstall "
        "torch (picks 2.13.0+cu130)" in lines
    )
    assert (
        "env:       overrides: RESOLVER_HOOK_OVERRIDE_CUDA='13.0', "
        "RESOLVER_HOOK_OVERRIDE_SM='12.0'" in lines
    )
    assert any(x.startswith("nvidia:    ") and x.endswith("(overridden)") for x in lines)
    assert any(x.startswith("probe:     nvidia-nvml: ") for x in lines)
    assert lines[-1] == "result: installed packages do not fit this machine: torch"


def test_cli_ada_with_cu126_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "12.6")
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "8.9")
    code, out, _ = run(capsys, "doctor", "--python", fake_python(tmp_path, TORCH_CU126))
    assert code == 0
    assert "ok      torch 2.13.0+cu126: fits this machine" in out.splitlines()
    assert out.splitlines()[-1] == "result: ok"


def test_cli_checks_the_environment_pip_would_install_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --python: the active virtual environment, where the fix would install."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    Path(fake_python(tmp_path, TORCH_CU126)).rename(venv / "bin" / "python")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    code, out, _ = run(capsys, "doctor", "--cuda", "13.0", "--sm", "12.0")
    assert code == 1
    assert (
        f"installed packages (pip's environment ({venv}/bin/python), Python 3.12): 1 of 2 "
        "have a manifest" in out.splitlines()
    )


def test_cli_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setenv("UV_TORCH_BACKEND", "cu126")
    code, out, _ = run(
        capsys,
        "doctor",
        "--json",
        "--python",
        fake_python(tmp_path, TORCH_CU126),
        "--cuda",
        "13.0",
        "--sm",
        "12.0",
    )
    data = json.loads(out)
    assert code == 1
    assert data["ok"] is False
    (torch,) = data["packages"]["checked"]
    assert {k: torch[k] for k in ("name", "version", "status", "flavour")} == {
        "name": "torch",
        "version": "2.13.0+cu126",
        "status": "fail",
        "flavour": CU126,
    }
    assert torch["fix"].endswith("(picks 2.13.0+cu130)")
    assert data["profile"]["overridden"] == ["cuda", "sm"]
    assert data["environment"] == {
        "CUDA_VISIBLE_DEVICES": "1",
        "overrides": {},
        "other_tools": {"UV_TORCH_BACKEND": "cu126"},
    }
    assert data["python"]["distributions"] == 2
    assert data["tags"]["python"] == "3.12"
    assert data["tags"]["count"] > len(data["tags"]["first"]) == 5
    assert all(t.startswith("cp312-") for t in data["tags"]["first"])
    assert [p["name"] for p in data["profile"]["probes"]][:1] == ["nvidia-nvml"]


def test_cli_unlistable_environment_is_a_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    python = fake_python(tmp_path, body="echo 'Traceback: no' >&2; exit 1\n")
    code, out, err = run(
        capsys, "doctor", "--python", python, "--target", "linux-x86_64-py312-cuda13.0-sm90"
    )
    assert (code, err) == (1, "")
    assert (
        f"fail  --python {python}: listing its packages failed: Traceback: no" in out.splitlines()
    )
    assert out.splitlines()[-1] == "result: the installed packages could not be checked"


def test_cli_build_and_installed_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The toolchain fails (no toolkit), the packages fit: one report, exit 1."""
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDACXX", "CUDAHOSTCXX", "NVCC_CCBIN", "CXX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-cuda"))
    python = fake_python(tmp_path, TORCH_CU126)
    argv = ["doctor", "--build", "--python", python, "--cuda", "12.6", "--sm", "8.9"]
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 1
    assert data["packages"]["checked"][0]["status"] == "ok"
    assert data["toolchain"]["ok"] is False
    assert data["toolchain"]["driver_cuda"] == "12.6"  # from the same profile
    assert data["ok"] is False
    code, out, _ = run(capsys, *argv)
    assert code == 1
    assert "ok      torch 2.13.0+cu126: fits this machine" in out
    assert "source-build toolchain:" in out
    # --build alone still prints only the toolchain report.
    code, out, _ = run(capsys, "doctor", "--build", "--driver-cuda", "12.6")
    assert "installed packages" not in out
    assert out.startswith("source-build toolchain:")


# --- end to end, with the fake NVML module ----------------------------------------------------


def doctor_process(
    *args: str, fake_nvml: dict[str, Any], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = child_env(env, fake_nvml=fake_nvml, pythonpath=os.pathsep.join([FAKE_PYNVML, str(REPO)]))
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", "doctor", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
        check=False,
        cwd=REPO,
    )


def test_process_fake_rtx5090(tmp_path: Path) -> None:
    python = fake_python(tmp_path, TORCH_CU126)
    proc = doctor_process(
        "--python",
        python,
        fake_nvml={"driver": "580.95.05", "cuda": 13000, "gpus": [RTX5090]},
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert "probe:     nvidia-nvml: found: NVML: driver 580.95.05, 1 GPU(s)" in lines
    assert any(
        x.startswith("  gpu 0:   NVIDIA GeForce RTX 5090, compute capability 12.0") for x in lines
    )
    # A child process reads the shipped manifests (not the frozen ones): torch 2.15.0 is
    # the newest release there (docs/facts.md section 1.5).
    assert (
        f"        fix: resolver-hook uv pip install --python {python} --force-reinstall "
        "torch (picks 2.15.0+cu130)" in lines
    )


def test_process_probe_failures_are_reasons(tmp_path: Path) -> None:
    """NVML fails, no /proc driver, no nvidia-smi, every GPU hidden: reasons, exit 0."""
    proc = doctor_process(
        "--python",
        fake_python(tmp_path, TORCH_CU126[1:]),
        fake_nvml={"init_error": "Driver Not Loaded"},
        env={"PATH": "/nonexistent", "CUDA_VISIBLE_DEVICES": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "probe:     nvidia-nvml: nothing: NVML init failed: Driver Not Loaded" in lines
    assert "probe:     nvidia-smi: nothing: nvidia-smi not found" in lines
    assert "env:       CUDA_VISIBLE_DEVICES=''" in lines
    assert lines[-1] == "result: ok"


def test_gpu_build_without_gpu_fails_when_the_package_has_no_cpu_build() -> None:
    """flash-attn has no CPU build: its CUDA wheel on a machine without a GPU cannot run."""
    fa = verdict(
        "linux-x86_64-py312-glibc2.39",
        inst("torch", "2.13.0+cu130"),
        inst("flash-attn", "2.8.3+cu130torch2.13", "cp312-cp312-manylinux_2_28_x86_64"),
    )
    assert fa["torch"].status == "warn"
    assert fa["flash-attn"].status == "fail"


ORT_CPU = [
    {"name": "onnxruntime", "version": "1.22.0", "tags": ["cp312-cp312-manylinux_2_27_x86_64"]}
]
# A name flavour, as onnxruntime's: the GPU build is another distribution, from a version on.
ORT_MANIFEST = """schema = 1
[package]
name = "onnxruntime"
[[index]]
install = "onnxruntime-gpu"
versions = ">=1.19"
cuda = ">=12.0"
platforms = ["linux_x86_64"]
[[index]]
versions = ">=1.19"
"""


@pytest.mark.parametrize("uv", [True, False], ids=["uv", "no-uv"])
def test_a_name_flavour_fix_uninstalls_the_other_distribution_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], uv: bool
) -> None:
    from resolver_hook.process import which

    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "12.8")
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "9.0")
    monkeypatch.setattr(which, "find_uv", lambda env=None: "/usr/bin/uv" if uv else None)
    python = fake_python(tmp_path, ORT_CPU)
    manifest = tmp_path / "onnxruntime.toml"
    manifest.write_text(ORT_MANIFEST)
    code, out, err = run(
        capsys, "doctor", "--installed", "--python", python, "--manifest", str(manifest)
    )
    assert code == 0, err
    (fix,) = [x.strip() for x in out.splitlines() if x.strip().startswith("fix:")]
    # onnxruntime-gpu beside the CPU onnxruntime would clobber its files: that goes first;
    # a version pattern picks the newest release it allows, never one version.
    if uv:
        assert fix == (
            f"fix: uv pip uninstall --python {python} onnxruntime && resolver-hook uv pip "
            f"install --python {python} --force-reinstall onnxruntime "
            "(picks the newest onnxruntime-gpu>=1.19)"
        )
    else:  # no uv on this machine: pip uninstalls, and uv is installed before it is used
        assert fix == (
            f"fix: {python} -m pip uninstall -y onnxruntime && python3 -m pip install uv && "
            f"resolver-hook uv pip install --python {python} --force-reinstall onnxruntime "
            "(picks the newest onnxruntime-gpu>=1.19)"
        )


# --- the kernel scan of the installed file ----------------------------------------------------

BLACKWELL = "linux-x86_64-py312-glibc2.39-cuda13.0-sm120"
TORCH_FILE = "cp312-cp312-manylinux_2_28_x86_64"


def scanned(sha: str, *objects: tuple[str, list[str]]) -> Callable[[str], Any]:
    """The scan cache as doctor reads it: the scan of one file, by its sha256."""
    return lambda asked: list(objects) if asked == sha else None


def test_a_scanned_wheel_whose_kernels_run_on_no_visible_gpu_fails_whatever_its_manifest_says() -> (
    None
):
    sha = "ab" * 32
    torch = inst("torch", "2.13.0+cu130", TORCH_FILE, sha256=sha)
    profile = parse_target(BLACKWELL)
    (plain,) = check_installed([torch], BUILTIN, profile)
    assert (plain.status, plain.kernels) == ("ok", None)  # the manifest's claim holds
    scans = scanned(sha, ("torch/lib/libtorch_cuda.so", ["sm_80", "sm_90"]))
    (c,) = check_installed([torch], BUILTIN, profile, scans=scans)
    assert c.status == "fail"
    assert c.summary == (
        f"torch 2.13.0+cu130: the installed wheel (sha256 {sha[:12]}): "
        "torch/lib/libtorch_cuda.so carries sm_80, sm_90, none of which runs on sm_120 "
        "(RTX 50xx, RTX PRO 6000 Blackwell)"
    )
    assert c.kernels == (
        f"read from the installed wheel (sha256 {sha[:12]}): they do not run on this machine"
    )
    good = scanned(sha, ("torch/lib/libtorch_cuda.so", ["sm_100", "sm_120"]), ("x.so", []))
    (ok,) = check_installed([torch], BUILTIN, profile, scans=good)
    assert ok.status == "ok"
    assert ok.kernels == (
        f"read from the installed wheel (sha256 {sha[:12]}): 1 library with kernels, each runs "
        "on every visible GPU"
    )
    # Another file's scan says nothing about this one.
    (other,) = check_installed([torch], BUILTIN, profile, scans=scanned("cd" * 32, ("a", ["x"])))
    assert other == plain


@pytest.mark.parametrize(
    ("text", "sha"),
    [
        # pip: PEP 610's archive_info.hashes (and the older single hash)
        ('{"archive_info": {"hash": "sha256=AB", "hashes": {"sha256": "%s"}}, "url": "f"}', "ab"),
        ('{"archive_info": {"hash": "sha256=%s"}, "url": "file:///x.whl"}', "cd"),
        # uv: the hash only in the URL's fragment
        ('{"url": "file:///w/x.whl#sha256=%s", "archive_info": {}}', "ef"),
    ],
)
def test_the_installed_files_sha256_is_read_from_direct_url_json(text: str, sha: str) -> None:
    assert archive_sha256(text % (sha * 32)) == sha * 32


@pytest.mark.parametrize(
    "text",
    ["", "[]", "not json", '{"dir_info": {}, "url": "file:///src"}', '{"url": "x#sha256=12"}'],
)
def test_no_sha256_where_direct_url_json_records_none(text: str) -> None:
    assert archive_sha256(text) is None
