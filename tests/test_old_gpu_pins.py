"""Old pins of onnxruntime-gpu and tensorflow (issue 50, "every GPU line"): the
releases whose wheels were read are judged (a fit, or a refusal with the reason), the
others stay unjudged; the corpus measure judges them by their own truth tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from resolver_hook.cli import main
from tests.paths import script

pytestmark = pytest.mark.builtin_data  # the shipped manifests and snapshot

ROOT = Path(__file__).resolve().parent.parent
L40 = "linux-x86_64-py312-cuda12.8-sm89"  # CUDA 12 driver, Python 3.12
A100 = "linux-x86_64-py311-cuda12.4-sm80"  # CUDA 12 driver, Python 3.11
A100_CUDA13 = "linux-x86_64-py311-cuda13.0-sm80"
B200 = "linux-x86_64-py312-cuda13.0-sm100"  # CUDA 13 driver, Python 3.12
GB10 = "linux-aarch64-py312-cuda13.0-sm121"


def _plan(capsys: pytest.CaptureFixture[str], line: str, target: str) -> dict[str, Any]:
    main(["plan", line, "--target", target, "--offline", "--json"])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    (pkg,) = data["packages"]
    return pkg


@pytest.mark.parametrize("target", [A100, A100_CUDA13, B200])
def test_onnxruntime_gpu_1_18_0_a_cuda_11_8_build_fits_cuda_12_and_13_drivers(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    # Planned to PyPI's own wheel (the pinned file where the page was read, else the
    # plain build left to the installer), never said unjudged.
    pkg = _plan(capsys, "onnxruntime-gpu==1.18.0", target)
    assert pkg["action"] in ("rewrite", "pass"), pkg["reason"]
    assert pkg["cause"] == "fit"
    assert pkg["flavour"]["version"] == "1.18.0"
    assert "meets >=11.8" in pkg["reason"]


@pytest.mark.parametrize("target", [L40, B200])
def test_onnxruntime_gpu_1_15_1_has_no_python_3_12_wheel(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    pkg = _plan(capsys, "onnxruntime-gpu==1.15.1", target)
    assert pkg["action"] == "error"
    assert pkg["cause"] == "no-fit"
    assert "Python 3.12" in pkg["refusal"]


def test_onnxruntime_gpu_1_15_1_fits_python_3_11_on_a_cuda_13_driver(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pkg = _plan(capsys, "onnxruntime-gpu==1.15.1", A100_CUDA13)
    assert pkg["action"] in ("rewrite", "pass"), pkg["reason"]
    assert (pkg["cause"], pkg["flavour"]["version"]) == ("fit", "1.15.1")


def test_onnxruntime_gpu_has_no_aarch64_build(capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _plan(capsys, "onnxruntime-gpu==1.18.0", GB10)
    assert (pkg["action"], pkg["cause"]) == ("error", "no-fit")
    assert "x86_64" in pkg["reason"]  # the only Linux builds


def test_an_onnxruntime_gpu_release_whose_wheel_was_not_read_stays_unjudged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pkg = _plan(capsys, "onnxruntime-gpu==1.17.1", L40)
    assert pkg["cause"] == "unjudged"


@pytest.mark.parametrize("target", [A100, B200])
def test_unpinned_onnxruntime_gpu_gets_the_build_of_the_drivers_cuda_major(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    # Not the CUDA 11.8 entries carried forward to CUDA 12/13 releases (kernels_until).
    pkg = _plan(capsys, "onnxruntime-gpu", target)
    assert pkg["cause"] == "fit", pkg["reason"]
    floor = ">=13.0" if target == B200 else ">=12.0"
    assert f"meets {floor}" in pkg["reason"]
    assert Version(pkg["flavour"]["version"]) >= Version("1.19")


@pytest.mark.parametrize("version", ["2.9.1", "2.12.1", "2.13.0"])
@pytest.mark.parametrize("target", [L40, B200, GB10])
def test_tensorflow_before_2_16_has_no_python_3_12_wheel(
    capsys: pytest.CaptureFixture[str], version: str, target: str
) -> None:
    pkg = _plan(capsys, f"tensorflow=={version}", target)
    assert (pkg["action"], pkg["cause"]) == ("error", "no-fit"), pkg["reason"]


@pytest.mark.parametrize("line", ["tensorflow==2.12.1", "tensorflow[and-cuda]==2.13.0"])
def test_tensorflow_2_12_and_2_13_fit_an_a100_with_python_3_11(
    capsys: pytest.CaptureFixture[str], line: str
) -> None:
    # The plain wheel is the GPU build (CUDA 11.8, compute_80 PTX for Ampere); the CUDA
    # libraries it loads come from the machine (docs/facts.md section 6.18).
    pkg = _plan(capsys, line, A100)
    assert (pkg["action"], pkg["cause"]) == ("pass", "fit"), pkg["reason"]
    assert "meets >=11.8" in pkg["reason"]
    assert "A100" in pkg["reason"]


def test_tensorflow_2_9_1_has_no_python_3_11_wheel(capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _plan(capsys, "tensorflow==2.9.1", A100)
    assert (pkg["action"], pkg["cause"]) == ("error", "no-fit")
    assert "Python 3.11" in pkg["refusal"]


@pytest.mark.parametrize("line", ["tensorflow", "tensorflow>=2.10", "tensorflow<2.14"])
def test_a_tensorflow_line_that_pins_no_one_release_stays_unjudged(
    capsys: pytest.CaptureFixture[str], line: str
) -> None:
    # pins_only: 2.13.0, judged, must not outrank every newer release it does not list.
    pkg = _plan(capsys, line, A100)
    assert (pkg["action"], pkg["cause"]) == ("pass", "unjudged"), pkg["reason"]
    assert pkg["line"] == line


def test_a_tensorflow_release_whose_wheel_was_not_read_stays_unjudged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pkg = _plan(capsys, "tensorflow==2.15.0", A100)
    assert (pkg["action"], pkg["cause"]) == ("pass", "unjudged")


def test_jax_0_3_15_with_a_cuda_11_extra_stays_unjudged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Its jaxlib came from a find-links page no stored copy of which was read.
    pkg = _plan(capsys, "jax[cuda11_cudnn805]==0.3.15", L40)
    assert pkg["cause"] == "unjudged"


@pytest.mark.parametrize(
    ("family", "version", "target", "verdict"),
    [
        ("onnxruntime-gpu", "1.18.0", L40, "right"),  # sm_80 SASS on sm_89
        ("onnxruntime-gpu", "1.18.0", B200, "right"),  # compute_80 PTX, CUDA 11 runtime
        ("onnxruntime-gpu", "1.15.1", L40, "wrong"),  # no cp312 wheel
        ("onnxruntime-gpu", "1.18.0", GB10, "wrong"),  # no aarch64 wheel
        ("tensorflow", "2.13.0", A100, "right"),  # compute_80 PTX on sm_80
        ("tensorflow", "2.12.1", L40, "wrong"),  # no cp312 wheel
        ("tensorflow", "2.9.1", A100, "wrong"),  # no cp311 wheel
    ],
)
def test_the_truth_tables_judge_pypis_build(
    family: str, version: str, target: str, verdict: str
) -> None:
    score = script("corpus_score")
    fam = next(f for f in score.families() if f.name == family)
    m = score.machine_of(target)[0]
    build = score.Build(Version(version), "pypi")
    assert fam.judge(build, SpecifierSet(f"=={version}"), m) == verdict


@pytest.mark.parametrize(
    ("family", "version", "target"),
    [
        ("onnxruntime-gpu", "1.15.1", L40),
        ("tensorflow", "2.12.1", B200),
        ("tensorflow", "2.9.1", A100),
    ],
)
def test_a_refusal_where_no_wheel_exists_is_right(family: str, version: str, target: str) -> None:
    score = script("corpus_score")
    fam = next(f for f in score.families() if f.name == family)
    m = score.machine_of(target)[0]
    assert fam.judge(None, SpecifierSet(f"=={version}"), m) == "right"
