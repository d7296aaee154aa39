"""NVIDIA's CUDA library wheels (nvidia-*-cuNN): judged from one table of cited facts
(resolver_hook/manifest/nvidia_wheels.toml, docs/facts.md section 6.17), issue 50."""

from __future__ import annotations

import fnmatch
import re
from types import SimpleNamespace

import pytest

from resolver_hook.host import parse_target
from resolver_hook.manifest import collect_manifests, gpunames
from resolver_hook.manifest.gpunames import cuda_distribution
from resolver_hook.manifest.nvidialibs import nvidia_sources
from resolver_hook.resolve import Plan, resolve

pytestmark = pytest.mark.builtin_data


def plan(target: str, *reqs: str) -> Plan:
    manifests = collect_manifests(env={}, entry_points=None)
    return resolve(list(reqs), manifests, parse_target(target))


def test_a_cu13_wheel_is_refused_on_a_cuda_12_driver_with_the_reason() -> None:
    p = plan("linux-x86_64-py312-cuda12.8-sm89", "nvidia-nccl-cu13==2.27.7")
    got = p.package("nvidia-nccl-cu13")
    assert got is not None
    assert got.action == "error"
    assert "driver CUDA >=13.0" in got.reason
    # One row per file (x86_64, aarch64): each refused on the driver.
    whys = [f for r in got.rejected for f in r.failures if f.rule == "cuda"]
    assert len(whys) == len(got.rejected) == 2
    why = whys[0]
    assert why.reason.endswith("this driver has CUDA 12.8")
    assert got.hint is not None
    assert "CUDA 13.0" in got.hint


def test_a_cu12_wheel_fits_on_a_cuda_12_4_driver() -> None:
    p = plan("linux-x86_64-py311-cuda12.4-sm80", "nvidia-cublas-cu12==12.4.5.8")
    got = p.package("nvidia-cublas-cu12")
    assert got is not None
    assert (got.action, got.cause) == ("pass", "fit")
    assert got.reason.startswith("the plain build from your index fits")
    assert "driver CUDA 12.4 meets >=12.0" in got.reason
    assert p.requirements == ("nvidia-cublas-cu12==12.4.5.8",)


def test_a_wheel_pypi_has_for_x86_64_only_is_refused_on_aarch64() -> None:
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "nvidia-cudnn-cu12==9.1.0.70")
    got = p.package("nvidia-cudnn-cu12")
    assert got is not None
    assert got.action == "error"
    whys = [f for r in got.rejected for f in r.failures]
    assert whys
    assert all(w.rule == "tags" and w.reason.endswith("Linux aarch64") for w in whys)


def test_a_release_without_kernels_for_the_gpu_is_refused_naming_the_gpu() -> None:
    # nvidia-nccl-cu13 2.27.7's x86_64 wheel carries SASS from sm_75 up (and PTX
    # compute_120): nothing of it runs on a V100 (compute capability 7.0).
    p = plan("linux-x86_64-py312-cuda13.0-sm70", "nvidia-nccl-cu13==2.27.7")
    got = p.package("nvidia-nccl-cu13")
    assert got is not None
    assert got.action == "error"
    # The x86_64 file is refused on its kernels alone (the aarch64 one on its CPU too).
    (x86,) = [r for r in got.rejected if all(f.rule != "tags" for f in r.failures)]
    (why,) = x86.failures
    assert why.rule == "gpu"
    assert "sm_75" in why.reason
    assert why.reason.endswith("(sm_70)")


def test_the_same_release_fits_a_gpu_its_kernels_cover() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm100", "nvidia-nccl-cu13==2.27.7")
    got = p.package("nvidia-nccl-cu13")
    assert got is not None
    assert (got.action, got.cause) == ("pass", "fit")
    assert "kernels cover B200/GB200 (sm_100)" in got.reason


def test_ptx_in_a_release_covers_a_newer_gpu_and_sass_a_newer_minor() -> None:
    # cuBLAS 12.4.5.8 has PTX compute_90 (JIT-compiled on a B200); NCCL 2.27.7 for CUDA 13
    # has SASS sm_120, which runs on a GB10 (12.1).
    for target, pin in (
        ("linux-x86_64-py312-cuda13.0-sm100", "nvidia-cublas-cu12==12.4.5.8"),
        ("linux-aarch64-py312-cuda13.0-sm121", "nvidia-nccl-cu13==2.27.7"),
    ):
        got = plan(target, pin).package(pin.split("==")[0])
        assert got is not None
        assert (got.action, got.cause) == ("pass", "fit"), (pin, got.reason)
        assert "kernels cover" in got.reason, got.reason


def test_a_library_without_device_code_runs_on_any_gpu_of_its_driver() -> None:
    # The scan of nvidia-cuda-runtime-cu12 12.4.127 found no GPU code: no gpu list.
    p = plan("linux-x86_64-py312-cuda13.0-sm100", "nvidia-cuda-runtime-cu12==12.4.127")
    got = p.package("nvidia-cuda-runtime-cu12")
    assert got is not None
    assert (got.action, got.cause) == ("pass", "fit")
    man = nvidia_sources()["nvidia-cuda-runtime-cu12"][1]()
    linux = [f for f in man.indexes if any("linux" in t for t in f.platforms or ())]
    assert linux
    assert all(
        not f.needs.gpu and f.needs.evidence and f.needs.evidence.endswith(".whl") for f in linux
    )


def test_a_release_the_table_has_not_read_stays_unjudged() -> None:
    # 12.8.4.1 is a real release whose files the table did not read: nothing is claimed.
    p = plan("linux-x86_64-py312-cuda12.8-sm89", "nvidia-cublas-cu12==12.8.4.1")
    got = p.package("nvidia-cublas-cu12")
    assert got is not None
    assert (got.action, got.cause) == ("pass", "unjudged")
    assert got.reason.startswith("UNJUDGED")


def test_a_library_the_table_does_not_list_stays_unjudged() -> None:
    p = plan("linux-x86_64-py312-cuda12.8-sm89", "nvidia-cufile-cu12==1.9.1.3")
    got = p.package("nvidia-cufile-cu12")
    assert got is not None
    assert (got.action, got.cause) == ("pass", "unjudged")


def test_every_name_of_the_table_is_a_cuda_library_wheel() -> None:
    for name, (_source, parse) in nvidia_sources().items():
        assert re.fullmatch(r"nvidia-[a-z0-9-]+-cu\d+", name), name
        assert cuda_distribution(name) is not None, name
        man = parse()
        major = name.rsplit("-cu", 1)[1]
        for f in man.indexes:
            assert str(f.needs.cuda) == f">={major}.0", name
            assert f.needs.evidence
            if any("linux" in t for t in f.platforms or ()):
                # A Linux build's kernels were read from its file (docs/facts.md 6.17).
                wheel = f"{name.replace('-', '_')}-{f.version}-*.whl"
                assert fnmatch.fnmatch(
                    f.needs.evidence, f"https://files.pythonhosted.org/packages/*/{wheel}"
                )
            else:
                assert fnmatch.fnmatch(f.needs.evidence, f"https://pypi.org/project/{name}/*")


@pytest.mark.parametrize("line", ["nvidia-cublas-cu12", "nvidia-cublas-cu12>=12.4"])
def test_a_line_that_pins_no_one_release_is_left_to_the_installer_unjudged(line: str) -> None:
    # The table lists the releases read, not every release: it cannot rank the others,
    # and beside torch the installer must stay free to take the release torch pins.
    p = plan("linux-x86_64-py312-cuda12.8-sm89", "torch==2.9.0", line)
    got = p.package("nvidia-cublas-cu12")
    assert got is not None
    assert (got.action, got.cause) == ("pass", "unjudged"), got.reason
    assert line in p.requirements
    assert not [c for c in p.constraints if c.startswith("nvidia-cublas-cu12")]


def test_a_name_is_matched_only_against_the_patterns_it_starts_as(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """fnmatch compiles each pattern it is given (a regular expression, ~50 us): a name
    the table does not list is matched against none, a listed one against those it
    starts as, and ``?``, ``[...]`` and a leading ``*`` still match as fnmatch's do."""
    matched: list[str] = []

    def fnmatchcase(name: str, pattern: str) -> bool:
        matched.append(pattern)
        return fnmatch.fnmatchcase(name, pattern)

    monkeypatch.setattr(gpunames, "fnmatch", SimpleNamespace(fnmatchcase=fnmatchcase))
    assert cuda_distribution("plainpkg") is None
    assert matched == []
    assert cuda_distribution("cupy-cuda12x") is not None
    assert matched == ["cupy-cuda*"]

    monkeypatch.setattr(gpunames, "_families", lambda: ((("cu?y", "[ab]x*", "*-gpu"), "w", "e"),))
    for name, fits in [("cupy", True), ("bx1", True), ("tf-gpu", True), ("cuy", False)]:
        assert (cuda_distribution(name) is not None) == fits, name
