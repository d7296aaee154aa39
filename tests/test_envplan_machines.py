"""The example environment on three machines that were refused whole: an AMD GPU
(ROCm, named by its gfx architecture in the target), an Arm server without a GPU
(``--cpu``) and a GH200 on a CUDA 12.6 driver; and the target spec's gfx field."""

from __future__ import annotations

import pytest

from resolver_hook.errors import UsageError
from resolver_hook.host.detect import parse_target
from tests.clirun import cli


def test_a_target_names_amd_gpus_by_their_gfx_architecture() -> None:
    p = parse_target("linux-x86_64-py312-rocm6.4-gfx942")
    assert p.rocm is not None
    assert (p.rocm.version, p.rocm.gfx) == ("6.4", ("gfx942",))
    assert "AMD ROCm 6.4 (gfx942)" in p.describe()
    several = parse_target("linux-x86_64-py312-rocm7.2-gfx90a,gfx942,gfx90a")
    assert several.rocm is not None
    assert several.rocm.gfx == ("gfx90a", "gfx942")


def test_a_gfx_field_without_a_rocm_version_says_so() -> None:
    p = parse_target("linux-x86_64-py312-gfx1100")
    assert p.rocm is not None
    assert (p.rocm.version, p.rocm.gfx) == (None, ("gfx1100",))
    assert any("ROCm version not given" in n for n in p.notes)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("linux-x86_64-rocm7.2-gfx94z", "'gfx94z' is not an AMD GPU name"),
        ("linux-x86_64-rocm7.2-gfx942,sm90", "'sm90' is not an AMD GPU name"),
        ("linux-x86_64-gfx942-gfx90a", "fields 'gfx942' and 'gfx90a' both give the AMD GPU list"),
    ],
)
def test_a_bad_gfx_field_is_refused_naming_it(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_target(spec)


def test_a_bad_gfx_field_is_one_error_line_and_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "detect", "--target", "linux-x86_64-py312-rocm6.4-gfx9")
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0].startswith("error: --target 'linux-x86_64-py312-rocm6.4-gfx9' field 'gfx9'")
    assert lines[1].startswith("hint: ")
    assert len(lines) == 2


def _whole(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``env plan --example ARGV...``, which must plan every pass: its output."""
    code, out, err = cli(capsys, "env", "plan", "--example", *argv)
    assert (code, err) == (0, ""), err
    assert "pass 1, stack: torch==2.13.0, torchvision==0.28.0, torchaudio>=2.11,<2.12" in out
    assert "pass 3, extras (--upgrade): torchcodec==0.15.0\n" in out
    return out


@pytest.mark.builtin_data
def test_an_amd_gpu_on_rocm_7_2_gets_the_whole_rocm_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _whole(capsys, "--target", "linux-x86_64-py312-rocm7.2-gfx942")
    assert "machine:     Linux x86_64, Python 3.12, glibc 2.35, AMD ROCm 7.2 (gfx942)" in out
    for line in (
        "  torch: torch==2.13.0+rocm7.2 from https://download.pytorch.org/whl/rocm7.2/torch/",
        "  torchvision: torchvision==0.28.0+rocm7.2 from "
        "https://download.pytorch.org/whl/rocm7.2/torchvision/",
        "  torchaudio: torchaudio==2.11.0+rocm7.2 from "
        "https://download.pytorch.org/whl/rocm7.2/torchaudio/",
    ):
        assert line in out
    assert "pass 4, optional, each import-checked, rolled back on failure: " in out
    assert "flash-attn" not in out.split("pass 4", 1)[1].split("\n", 1)[0]


@pytest.mark.builtin_data
def test_an_arm_server_without_a_gpu_gets_the_aarch64_cpu_stack_with_cpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _whole(capsys, "--target", "linux-aarch64-py312", "--cpu")
    for name, version in (("torch", "2.13.0"), ("torchvision", "0.28.0"), ("torchaudio", "2.11.0")):
        line = f"  {name}: {name}=={version}+cpu from https://download.pytorch.org/whl/cpu/{name}/"
        assert f"{line}: Linux aarch64, Python 3.12" in out
    assert "optional" not in out
    assert "note: CPU-only environment" in out


@pytest.mark.builtin_data
def test_a_gh200_on_a_cuda_12_6_driver_is_refused_naming_the_builds_missing_beside_torch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # torch 2.13.0 has a cu126 aarch64 build (sm_80, sm_90); no source lists a CUDA 12
    # aarch64 torchvision 0.28.0 or torchaudio 2.11 (PyPI's are CUDA 13 builds).
    code, out, err = cli(
        capsys, "env", "plan", "--example", "--target", "linux-aarch64-py312-cuda12.6-sm90"
    )
    assert code == 1
    assert "pass 1" not in out
    assert err.endswith(
        "error: the stack has no build for this machine\n"
        "hint: torch 2.13.0+cu126 (https://download.pytorch.org/whl/cu126/torch/) runs here, "
        "but the data has no build of torchvision==0.28.0 or torchaudio>=2.11,<2.12 beside it "
        "for this machine: no source their manifests cite lists one (`resolver-hook explain "
        "NAME` with this target lists every build it knows)\n"
    )
    assert "hint: a driver of 580 or newer (CUDA 13.0) gets torchvision 0.28.0" in err


@pytest.mark.builtin_data
def test_rocm_6_4_is_refused_at_torch_with_the_rocm_release_that_has_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli(
        capsys, "env", "plan", "--example", "--target", "linux-x86_64-py312-rocm6.4-gfx942"
    )
    assert code == 1
    assert (
        "  torch 2.13.0+rocm7.2 (download.pytorch.org/whl/rocm7.2/torch/): "
        "needs ROCm >=7.2; this machine has ROCm 6.4\n"
    ) in err
    assert "hint: an AMD GPU with ROCm 7.2 or newer gets torch 2.13.0+rocm7.2\n" in err
    assert "hint: an AMD GPU with ROCm 7.2 or newer gets torchaudio 2.11.0+rocm7.2\n" in err
    assert not [line for line in err.splitlines() if line.startswith("hint: an NVIDIA GPU")]


@pytest.mark.builtin_data
def test_a_refused_stack_fits_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, _, err = cli(
        capsys, "env", "plan", "--example", "--target", "linux-aarch64-py312-cuda12.6-sm90"
    )
    assert code == 1
    assert [line for line in err.splitlines() if len(line) > 80] == []
    assert "hint: torch 2.13.0+cu126 (https://download.pytorch.org/whl/cu126/torch/) runs" in err
