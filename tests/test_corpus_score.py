"""scripts/corpus_score.py: each GPU family judged by its own truth table.

The whole measure plans the corpus for four machines (minutes); these hold the judging
rules on single builds, with the real truth tables of scripts/data.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from resolver_hook.ground.toml import loads
from resolver_hook.reqfile import parse_requirements
from tests.paths import script

ROOT = Path(__file__).resolve().parent.parent


SCORE = script("corpus_score")
L40 = SCORE.machine_of("linux-x86_64-py312-cuda12.8-sm89")[0]
B200 = SCORE.machine_of("linux-x86_64-py312-cuda13.0-sm100")[0]
GB10 = SCORE.machine_of("linux-aarch64-py312-cuda13.0-sm121")[0]


def _family(name: str, package: str | None = None) -> object:
    found = [f for f in SCORE.families() if f.name == name]
    return next(f for f in found if package is None or f.covers(package))


def _build(version: str, label: str) -> object:
    return SCORE.Build(Version(version), label)


def test_every_family_of_the_issue_is_scored_most_pinned_first() -> None:
    names = list(dict.fromkeys(f.name for f in SCORE.families()))
    assert names[:3] == ["torch", "torchvision/torchaudio", "xformers"]
    assert {"flash-attn", "bitsandbytes", "onnxruntime-gpu", "cupy", "triton", "pyg"} <= set(names)
    assert {"jax", "tensorflow", "nvidia-*"} <= set(names)


def test_a_family_without_truth_facts_is_unknown_never_guessed() -> None:
    cupy = _family("cupy")
    assert cupy.covers("cupy-cuda12x")
    spec = SpecifierSet("==13.6.0")
    assert cupy.judge(_build("13.6.0", "pypi"), spec, L40) == "unknown"
    assert cupy.judge(None, spec, L40) == "unknown"  # a refusal cannot be judged either


def test_torchvision_is_judged_as_the_torch_build_it_is_built_against() -> None:
    tv = _family("torchvision/torchaudio", "torchvision")
    spec = SpecifierSet("==0.28.0")
    assert tv.judge(_build("0.28.0", "cu130"), spec, B200) == "right"
    # torch 2.13's cu126 wheels carry no sm_100 kernels
    assert tv.judge(_build("0.28.0", "cu126"), spec, B200) == "wrong"
    # nothing runs on a CUDA 12.8 driver with CUDA 13 wheels, but cu126 does
    assert tv.judge(None, spec, L40) == "wrong"


def test_torchvision_beside_a_pinned_torch_must_be_built_for_that_torch() -> None:
    tv = _family("torchvision/torchaudio", "torchvision")
    tv.pin[:] = [SpecifierSet("==2.0.1")]
    try:
        assert tv.judge(_build("0.29.2", "cu130"), SpecifierSet(), B200) == "wrong"
        # torch 2.0.1's builds (cu117, cu118) carry no sm_100 kernels: refusing is right
        assert tv.judge(None, SpecifierSet(), B200) == "right"
    finally:
        tv.pin[:] = []


def test_torchaudio_whose_requires_dist_is_a_range_goes_beside_a_newer_torch() -> None:
    ta = _family("torchvision/torchaudio", "torchaudio")
    ta.pin[:] = [SpecifierSet("==2.13.0")]
    try:  # 2.11.0 names no torch at all, 2.11.1 needs torch>=2.11 (PyPI's METADATA)
        assert ta.judge(_build("2.11.0", "cu130"), SpecifierSet("==2.11.0"), B200) == "right"
        assert ta.judge(_build("2.10.0", "cu130"), SpecifierSet("==2.10.0"), B200) == "wrong"
    finally:
        ta.pin[:] = []


@pytest.mark.parametrize(
    ("version", "machine", "verdict"),
    [
        ("3.2.0", "B200", "wrong"),  # Blackwell support arrived in 3.3
        ("3.5.0", "GB10", "wrong"),  # its ptxas cannot assemble sm_121a
        ("3.7.1", "GB10", "right"),
        ("3.3.0", "GB10", "wrong"),  # no aarch64 wheel before 3.5.0
        ("3.2.0", "L40", "right"),
    ],
)
def test_triton_runs_where_its_bundled_compiler_knows_the_gpu(
    version: str, machine: str, verdict: str
) -> None:
    triton = _family("triton")
    m = {"L40": L40, "B200": B200, "GB10": GB10}[machine]
    assert triton.judge(_build(version, "pypi"), SpecifierSet(), m) == verdict


def test_xformers_counts_the_ptx_its_build_script_embeds() -> None:
    xf = _family("xformers")
    spec = SpecifierSet("==0.0.33.post2")
    assert xf.judge(_build("0.0.33.post2", "pypi"), spec, B200) == "right"  # 8.0+PTX
    assert xf.judge(_build("0.0.33.post2", "cu130"), spec, L40) == "wrong"  # CUDA 13
    assert xf.judge(_build("0.0.33.post2", "pypi"), spec, GB10) == "wrong"  # x86_64 only
    assert xf.judge(_build("0.0.21", "pypi"), SpecifierSet("==0.0.21"), L40) == "unknown"


@pytest.mark.parametrize(
    ("line", "build", "verdict"),
    [
        ("==2.3.0", ("2.3.0", "cu121"), "wrong"),  # CUDA 12.1: no Blackwell SASS
        ("==2.6.0", ("2.6.0", "cu126"), "wrong"),
        ("==2.3.0", ("2.3.0", "cpu"), "wrong"),  # PyPI's own aarch64 2.3.0 is a CPU build
        ("==2.3.0", None, "right"),  # so refusing torch==2.3.0 on a GB10 is right
        ("<=2.6.0,>=2.0.0", None, "right"),
        ("==2.8.0", ("2.8.0", "cu128"), "unknown"),  # 2.8's aarch64 lists were not read
        ("==2.8.0", None, "unknown"),
        ("==2.7.1", ("2.7.1", "cu128"), "right"),  # 2.7's aarch64 12.8 list has 12.0
        ("==2.7.1", None, "wrong"),  # so refusing torch==2.7.1 on a GB10 is wrong
        ("==2.9.0", ("2.9.0", "cu130"), "right"),  # as has 2.9's aarch64 13.0 list
        ("==2.9.0", ("2.9.0", "cu126"), "wrong"),
        ("==2.9.0", None, "wrong"),  # so refusing torch==2.9.0 on a GB10 is wrong
    ],
)
def test_torch_built_before_cuda_12_8_runs_on_no_gb10(
    line: str, build: tuple[str, str] | None, verdict: str
) -> None:
    """CUDA toolkits before 12.8 compile no Blackwell SASS (NVIDIA), so on a GB10 a
    torch build of such a runtime is judged not to run, published or not; a newer
    runtime whose aarch64 kernel list was not read stays unknown."""
    torch = _family("torch")
    choice = _build(*build) if build else None
    assert torch.judge(choice, SpecifierSet(line), GB10) == verdict


def test_every_truth_row_names_its_source() -> None:
    for path in sorted((ROOT / "scripts" / "data").glob("*_truth.toml")):
        table = loads(path.read_text())
        for row in table.get("builds", []) + table.get("sass", []) + table.get("toolkit", []):
            assert row.get("source"), (path.name, row)


@pytest.mark.parametrize("by_pip", ["right", "wrong", "unknown"])
def test_a_line_the_plan_judged_and_left_to_pip_is_judged_as_pips_build(by_pip: str) -> None:
    # "the plain build from your index fits": not silent; what pip installs is the
    # plan's choice, right or wrong as pip's is.
    xformers = _family("xformers")
    (entry,) = parse_requirements("xformers==0.0.26.post1\n").entries
    pkg = {"action": "pass", "cause": "fit"}
    assert xformers.ours(pkg, entry, L40, by_pip) == by_pip
    assert xformers.ours({"action": "pass", "cause": "no-manifest"}, entry, L40, by_pip) == (
        "silent"
    )


def test_nvidia_wheels_are_judged_per_package_by_driver_platform_and_kernels() -> None:
    nccl13 = _family("nvidia-*", "nvidia-nccl-cu13")
    spec = SpecifierSet("==2.27.7")
    assert nccl13.judge(_build("2.27.7", "pypi"), spec, L40) == "wrong"  # CUDA 13 on 12.8
    assert nccl13.judge(None, spec, L40) == "right"  # so a refusal is right
    assert nccl13.judge(_build("2.27.7", "pypi"), spec, GB10) == "right"  # sm_120 on 12.1
    # Kernels as the file holds them: cuPTI 12.4 has SASS up to sm_90 and no PTX; the
    # CUDA runtime has no GPU code at all, so any GPU of its driver runs it.
    cupti = _family("nvidia-*", "nvidia-cuda-cupti-cu12")
    assert cupti.judge(_build("12.4.127", "pypi"), SpecifierSet("==12.4.127"), B200) == "wrong"
    assert cupti.judge(_build("12.4.127", "pypi"), SpecifierSet("==12.4.127"), L40) == "right"
    cudart = _family("nvidia-*", "nvidia-cuda-runtime-cu12")
    assert cudart.judge(_build("12.4.127", "pypi"), SpecifierSet("==12.4.127"), B200) == "right"
    cudnn = _family("nvidia-*", "nvidia-cudnn-cu12")
    assert cudnn.judge(None, SpecifierSet("==9.1.0.70"), GB10) == "right"  # x86_64 only
    # A name the table lists no release of is still a line of the family, unknown.
    other = _family("nvidia-*", "nvidia-cufile-cu12")
    assert other is not cudnn
    assert other.judge(None, SpecifierSet("==1.9.1.3"), L40) == "unknown"
    line = parse_requirements("nvidia-cudnn-cu12==9.1.0.70\n").entries[0]
    assert [f.covers("nvidia-cudnn-cu12") for f in SCORE.families()].count(True) == 1
    assert SCORE._is_line_of(cudnn, line)


@pytest.mark.parametrize(
    ("version", "machine", "verdict"),
    [
        ("0.45.1", "L40", "right"),  # cuda117..cuda126 carry sm_89
        ("0.45.1", "B200", "wrong"),  # no library carries sm_100, none PTX
        ("0.46.1", "GB10", "right"),  # aarch64 cuda128/129 carry sm_120
        ("0.49.2", "B200", "right"),
        ("0.38.1", "GB10", "wrong"),  # a py3-none-any wheel of x86-64 libraries
        ("0.38.1", "L40", "unknown"),  # its library follows the libcudart it finds
    ],
)
def test_bitsandbytes_runs_where_a_library_of_its_wheel_carries_the_gpu(
    version: str, machine: str, verdict: str
) -> None:
    bnb = _family("bitsandbytes")
    m = {"L40": L40, "B200": B200, "GB10": GB10}[machine]
    assert bnb.judge(_build(version, "pypi"), SpecifierSet(), m) == verdict


def test_refusing_bitsandbytes_without_an_aarch64_wheel_is_right() -> None:
    bnb = _family("bitsandbytes")
    assert bnb.judge(None, SpecifierSet("==0.45.1"), GB10) == "right"
    assert bnb.judge(None, SpecifierSet("==0.46.*"), GB10) == "wrong"
