"""Tests of the shipped data (resolver_hook/manifests/*.toml), not of any rule.

Every test here is marked ``builtin_data``: it reads the manifests resolver-hook ships.
Rule tests elsewhere read frozen fixtures (tests/frozen.py), so a correction to the
shipped data breaks only tests in this file. Facts cite docs/facts.md.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.manifest import builtin_manifests
from resolver_hook.resolve import Plan, resolve

pytestmark = pytest.mark.builtin_data


def plan(target: str, *reqs: str) -> Plan:
    return resolve(list(reqs), builtin_manifests(), parse_target(target))


def test_builtin_manifests_load() -> None:
    ms = builtin_manifests()
    assert set(ms) == {
        "torch",
        "torchvision",
        "torchaudio",
        "flash-attn",
        "natten",
        "tilert",
        # the flavour forms (docs/facts.md section 6)
        "bitsandbytes",
        "cupy",
        "deepspeed",
        "faiss-gpu",
        "jax",
        "llama-cpp-python",
        "nvidia-dali",
        "onnxruntime",
        "onnxruntime-gpu",
        "pyg-lib",
        "spconv",
        "tensorflow",
        "tilelang",
        "torch-scatter",
        "torch-sparse",
        "triton",
        "xformers",
    }


def test_every_builtin_entry_has_evidence_and_a_checked_date() -> None:
    missing = [
        f"{m.source}: {f.where}"
        for m in builtin_manifests().values()
        for f in m.flavours
        if not (f.needs.evidence and f.needs.evidence.startswith("https://"))
        or f.needs.checked is None
    ]
    assert missing == []


def test_no_builtin_entry_claims_a_check_in_the_future() -> None:
    # A checked date is when someone compared the entry with its evidence: never later
    # than today (the clock only moves forward, so this cannot start failing by itself).
    today = datetime.date.today()
    for m in builtin_manifests().values():
        for f in m.flavours:
            assert f.needs.checked is not None
            assert f.needs.checked <= today, (m.source, f.where)


def test_no_builtin_flash_attn_entry_claims_ptx() -> None:
    # flash-attn's setup.py emits SASS only (code=sm_XX); docs/facts.md section 1.6.
    fa = builtin_manifests()["flash-attn"]
    assert fa.wheels
    for w in fa.wheels:
        assert w.needs.gpu, w.where
        assert not any(t.kind == "ptx" for t in w.needs.gpu), (w.where, w.needs.gpu)
        cu = "cu126" if "+cu126" in w.filename else "cu130"
        expected = ["sm_80", "sm_90"] if cu == "cu126" else ["sm_80", "sm_90", "sm_100", "sm_120"]
        assert [str(t) for t in w.needs.gpu] == expected, w.filename


def test_no_builtin_torch_entry_claims_ptx() -> None:
    # Whether torch 2.13.0 release wheels carry compute_120 is disputed (docs/facts.md
    # section 1.5): no entry claims it.
    for name in ("torch", "torchvision", "torchaudio"):
        for f in builtin_manifests()[name].flavours:
            assert not any(t.kind == "ptx" for t in f.needs.gpu), (name, f.where)


def test_aarch64_with_an_older_gpu_refuses_torch_for_its_kernels() -> None:
    # PyTorch's aarch64 CUDA builds whose lists were read start at sm_80 (docs/facts.md
    # section 1.5): AWS g5g's T4G (sm_75) is not covered by any of them. Those of 2.8
    # and 2.10 were not read: the plan says so (UNJUDGED), it does not judge them to run.
    p = plan("linux-aarch64-py312-cuda13.0-sm75", "torch")
    torch = p.package("torch")
    assert (torch.action, torch.cause) == ("rewrite", "unjudged")
    assert str(torch.version).startswith("2.10")
    assert "2.10" in str(torch.unjudged)
    cuda = [
        r
        for r in torch.rejected
        if "aarch64" in r.candidate and "+cu" in r.candidate and "ranked below" not in r.reason
    ]
    # 2.15.0 cu130, cu132; 2.14.1, 2.14.0 and 2.13.0 cu126, cu130, cu132; 2.12.1 cu130;
    # the 2.11 cu128 range; the 2.7 cu128 and 2.9 cu126, cu128, cu130 ranges
    assert len(cuda) == 17
    # (2.7's aarch64 12.8 list starts at sm_90)
    assert all(r.reason.startswith(("kernels sm_80", "kernels sm_90")) for r in cuda)
    assert all("do not run on T4" in r.reason for r in cuda)


@pytest.mark.parametrize(
    ("pin", "build"),
    [
        ("==2.7.1", "2.7.1+cu128"),
        ("==2.7.0", "2.7.0+cu128"),
        ("==2.9.0", "2.9.0+cu130"),
        ("==2.9.1", "2.9.1+cu130"),
    ],
)
def test_dgx_spark_gets_the_aarch64_builds_of_torch_2_7_and_2_9(pin: str, build: str) -> None:
    # PyTorch's aarch64 CUDA 12.8 build of 2.7 carries sm_90, sm_100, sm_120; 2.9's CUDA
    # 13.0 build sm_80 to sm_120 (docs/facts.md section 1.5): a GB10 (sm_121) runs the
    # sm_120 code, so the pin is planned from its label's page, not refused as x86_64.
    p = plan("linux-aarch64-py312-cuda13.0-sm121", f"torch{pin}")
    torch = p.package("torch")
    assert torch.action == "rewrite"
    assert torch.version == build
    assert torch.flavour.platforms == ("manylinux_2_28_aarch64",)


@pytest.mark.parametrize(
    ("pin", "build"), [("==2.8.0", "2.8.0+cu128"), ("==2.10.0", "2.10.0+cu130")]
)
def test_dgx_spark_plans_torch_2_8_and_2_10_unjudged_not_x86_64_only(pin: str, build: str) -> None:
    # PyTorch published Linux aarch64 CUDA builds of 2.8 (cu128) and 2.10 (cu126, cu128,
    # cu130), but no source read gives their kernel lists (docs/facts.md section 1.5):
    # the pin is planned from its label's page and said UNJUDGED, not refused as built
    # for x86_64 only.
    torch = plan("linux-aarch64-py312-cuda13.0-sm121", f"torch{pin}").package("torch")
    assert (torch.action, torch.cause, torch.version) == ("rewrite", "unjudged", build)
    assert "aarch64" in str(torch.unjudged)


@pytest.mark.parametrize("release", ["2.9.0", "2.9.1"])
def test_dgx_spark_leaves_torchaudio_2_9_beside_torch_2_9_unjudged(release: str) -> None:
    # torch 2.9's aarch64 CUDA 13.0 build runs on a GB10; no source read names a CUDA
    # build of torchaudio 2.9 for aarch64 (PyPI's is a CPU build): said, not refused.
    p = plan(
        "linux-aarch64-py312-cuda13.0-sm121",
        f"torch=={release}",
        f"torchaudio=={release}",
        f"torchvision==0.24.{release[-1]}",
    )
    assert p.package("torch").version == f"{release}+cu130"
    vision = p.package("torchvision")
    assert (vision.action, vision.version) == ("rewrite", f"0.24.{release[-1]}")
    assert vision.url == "https://download.pytorch.org/whl/cu130/torchvision/"
    audio = p.package("torchaudio")
    assert audio.cause == "unjudged"
    assert audio.action != "error"


def test_x86_64_with_the_same_gpu_gets_cu130() -> None:
    # torch 2.15.0 is the newest release; its x86_64 CUDA 13 builds start at sm_75
    # (docs/facts.md section 1.5).
    p = plan("linux-x86_64-py312-cuda13.0-sm75", "torch")
    assert p.package("torch").version == "2.15.0+cu130"
    assert p.package("torch").flavour.platforms == ("manylinux_2_28_x86_64",)


def test_jetson_thor_under_cuda_13_gets_the_aarch64_cu130_build() -> None:
    # CC 11.0 is in PyTorch's aarch64 13.0 list (docs/facts.md section 1.5).
    p = plan("linux-aarch64-py312-cuda13.0-sm110", "torch")
    assert p.package("torch").version == "2.15.0+cu130"
    assert p.package("torch").find_links == "https://download.pytorch.org/whl/cu130/torch/"


def test_windows_on_arm_gets_the_cpu_build_for_the_pythons_a_source_lists() -> None:
    # win_arm64 CPU wheels of 2.13.0 exist for cp311-cp313 (docs/facts.md section 1.5).
    p = plan("windows-arm64-py312", "torch")
    torch = p.package("torch")
    assert (torch.action, torch.version) == ("rewrite", "2.13.0+cpu")
    assert torch.find_links == "https://download.pytorch.org/whl/cpu/torch/"
    # Python 3.14 has none (pytorch/pytorch#195033), 3.10 no source: refused, with the
    # nearest Python that has one.
    for py, nearest in (("314", "3.13"), ("310", "3.11")):
        torch = plan(f"windows-arm64-py{py}", "torch").package("torch")
        assert torch.action == "error"
        assert torch.fix is not None
        assert torch.fix.gets == "torch 2.13.0+cpu"
        assert torch.hint.startswith(f"Python {nearest} gets torch 2.13.0+cpu")


def test_windows_on_arm_with_an_nvidia_gpu_is_not_given_the_cpu_build_silently() -> None:
    # No win_arm64 CUDA build is published: refused; the x64 interpreter (emulated, GPU
    # native) comes first, the CPU pin second.
    torch = plan("windows-arm64-py312-cuda13.0-sm121", "torch").package("torch")
    assert torch.action == "error"
    assert torch.fix is not None
    assert (torch.fix.os, torch.fix.arch) == ("windows", "x86_64")
    assert [a.pin for a in torch.alternatives] == ["torch==2.13.0+cpu"]


@pytest.mark.parametrize(
    ("target", "version"),
    [
        # torch 2.15.0 has no CUDA 12 build; 2.14.1 is the newest with cu126
        # (docs/facts.md section 1.5).
        ("linux-x86_64-py312-cuda13.0-sm90", "2.15.0+cu130"),
        ("linux-x86_64-py312-cuda13.2-sm90", "2.15.0+cu132"),
        ("linux-x86_64-py312-cuda12.8-sm90", "2.14.1+cu126"),
    ],
)
def test_which_torch_cuda_build_wins(target: str, version: str) -> None:
    assert plan(target, "torch").package("torch").version == version


def test_torchvision_on_aarch64_cu130_has_no_local_label() -> None:
    # pytorch/vision#9330: aarch64 wheels on /whl/cu130/torchvision/ carry no +cu130.
    # torch 2.13 takes torchvision 0.28.0 (0.29 needs torch>=2.14, docs/facts.md 1.5).
    p = plan("linux-aarch64-py312-cuda13.0-sm100", "torch==2.13.*", "torchvision")
    tv = p.package("torchvision")
    assert (tv.version, tv.find_links) == (
        "0.28.0",
        "https://download.pytorch.org/whl/cu130/torchvision/",
    )
    assert p.package("torch").version == "2.13.0+cu130"


def test_torchvision_0_29_from_pypi_is_a_cuda_13_build_on_both_linux_cpus() -> None:
    # PyPI's torchvision 0.29.2 wheels link CUDA 13 and carry sm_121 SASS (1.5).
    for target in ("linux-aarch64-py312-cuda13.0-sm121", "linux-x86_64-py312-cuda13.0-sm89"):
        p = plan(target, "torch", "torchvision")
        tv, torch = p.package("torchvision"), p.package("torch")
        assert (tv.action, torch.version) == ("pass", "2.15.0+cu130"), target
    # On a CUDA 12 driver it does not fit; 0.29.0+cu126 couples with torch 2.14.0+cu126.
    p = plan("linux-x86_64-py312-cuda12.8-sm89", "torch", "torchvision")
    assert p.package("torchvision").version == "0.29.0+cu126"
    assert p.package("torch").version == "2.14.0+cu126"


@pytest.mark.parametrize(
    "target", ["linux-x86_64-py312-cuda12.8-sm89", "linux-x86_64-py311-cuda12.4-sm80"]
)
def test_torch_2_14_0_on_a_cuda_12_driver_gets_torchvision_0_29_0_cu126_offline(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """torchvision 0.29.0+cu126 is on PyTorch's cu126 page beside torch 2.14.0+cu126
    (docs/facts.md section 1.5): beside torch==2.14.0 an unpinned torchvision is that
    build on a CUDA 12 driver, not refused for want of a CUDA 13 one."""
    pkgs = _offline(capsys, target, "torch==2.14.0", "torchvision")
    tv = pkgs["torchvision"]
    assert (tv["action"], tv["version"]) == ("rewrite", "0.29.0+cu126"), tv["reason"]
    assert tv["find_links"] == "https://download.pytorch.org/whl/cu126/torchvision/"
    assert pkgs["torch"]["version"] == "2.14.0+cu126"


def test_dgx_spark_gets_torchaudio_from_its_cuda_13_aarch64_wheel() -> None:
    # PyPI's torchaudio 2.11.1 aarch64 wheel is a CUDA 13 build with sm_120 SASS, which
    # covers GB10 (sm_121) (docs/facts.md section 1.5); it needs torch>=2.11.
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "torch", "torchaudio")
    ta, torch = p.package("torchaudio"), p.package("torch")
    assert (ta.action, torch.version) == ("pass", "2.15.0+cu130")
    assert ta.flavour.platforms == ("manylinux_2_28_aarch64",)


def test_dgx_spark_gets_torchaudio_2_11_0_beside_torch_2_13_0() -> None:
    # PyPI's torchaudio 2.11.0 aarch64 wheels are CUDA 13 builds with sm_120 SASS and
    # no torch pin (docs/facts.md section 1.5): beside torch==2.13.0 on a GB10 the pin
    # fits, where it was refused as an x86_64-only release.
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "torch==2.13.0", "torchaudio==2.11.0")
    ta, torch = p.package("torchaudio"), p.package("torch")
    assert ta.action != "error", ta.reason
    assert ta.flavour.platforms == ("manylinux_2_28_aarch64",)
    assert str(ta.flavour.version) == "2.11.0"
    assert torch.version == "2.13.0+cu130"
    # It needs a CUDA 13 driver: a GH200 on CUDA 12.8 still has no torchaudio 2.11.0.
    assert (
        plan("linux-aarch64-py312-cuda12.8-sm90", "torchaudio==2.11.0").package("torchaudio").action
        == "error"
    )


def test_natten_cu132_couples_with_a_torch_build_that_exists() -> None:
    p = plan("linux-x86_64-py312-cuda13.2-sm100", "natten")
    assert p.package("natten").version == "0.21.7+torch2130cu132"
    assert p.package("torch").version == "2.13.0+cu132"


def test_natten_claims_its_build_scripts_kernel_lists() -> None:
    # NATTEN's pkg_helpers.bash (docs/facts.md section 1.7): no 11.0, so Thor is refused;
    # GB10 (12.1) is covered by sm_120.
    thor = plan("linux-aarch64-py312-cuda13.0-sm110", "natten").package("natten")
    assert thor.action == "error"
    spark = plan("linux-aarch64-py312-cuda13.0-sm121", "natten").package("natten")
    assert spark.version == "0.21.7+torch2130cu130"


def test_tilert_is_refused_on_aarch64_and_gb10() -> None:
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "tilert")
    assert p.package("tilert").action == "error"
    p = plan("linux-x86_64-py312-cuda13.0-sm121", "tilert")
    assert "sm_100f does not run on GB10" in p.package("tilert").rejected[0].reason


def test_readme_quick_start_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--example", "--target", "linux-x86_64-py312-cuda13.0-sm100"]) == 0
    assert "torch==2.13.0+cu130" in capsys.readouterr().out


def test_an_offline_plan_of_tilert_honours_its_metadata(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """tilert 0.1.6.post1-3 require torch>=2.11,<2.13 (their METADATA, in the shipped
    snapshot), 0.1.5.post2 torch==2.11.0 (its manifest entry): offline, the plan takes
    a torch that the chosen tilert accepts, and with a newer torch asked for, none."""
    target = ["--target", "linux-x86_64-py312-cuda13.0-sm100"]
    assert main(["plan", "tilert", "torch", "--offline", "--json", *target]) == 0
    packages = {p["name"]: p for p in json.loads(capsys.readouterr().out)["packages"]}
    tilert, torch = packages["tilert"], packages["torch"]
    assert "0.1.6" in (tilert["url"] or "")
    assert Version("2.11") <= Version(torch["version"]) < Version("2.13")

    assert main(["plan", "tilert", "torch>=2.13", "--offline", "--json", *target]) != 0
    packages = {p["name"]: p for p in json.loads(capsys.readouterr().out)["packages"]}
    tilert = packages["tilert"]
    assert tilert["action"] == "error"
    why = " ".join(f["reason"] for r in tilert["rejected"] for f in r["failures"])
    assert "needs torch<2.13,>=2.11" in why
    assert "needs torch==2.11.0" in why


def _offline(capsys: pytest.CaptureFixture[str], target: str, *reqs: str) -> dict[str, Any]:
    main(["plan", *reqs, "--offline", "--json", "--target", target])
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["packages"]}


def test_torchaudio_2_0_1_cu117_is_planned_beside_torch_2_0_0_cu117_offline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pytorch/serve pins torch==2.0.0+cu117 and torchaudio==2.0.1+cu117 from the cu117
    index (docs/facts.md section 1.5): on an A100 under Python 3.11 (torch 2.0 has no
    Python 3.12 build) the pin is planned from that page, not unjudged."""
    target = "linux-x86_64-py311-cuda12.4-sm80"
    pkgs = _offline(capsys, target, "torch==2.0.0+cu117", "torchaudio==2.0.1+cu117")
    ta = pkgs["torchaudio"]
    assert (ta["action"], ta["version"]) == ("rewrite", "2.0.1+cu117"), ta["reason"]
    assert ta["find_links"] == "https://download.pytorch.org/whl/cu117/torchaudio/"
    assert pkgs["torch"]["version"] == "2.0.0+cu117"


@pytest.mark.parametrize(
    "target", ["linux-x86_64-py312-cuda12.8-sm89", "linux-x86_64-py311-cuda12.4-sm80"]
)
@pytest.mark.parametrize("torch", ["torch==2.14.0", "torch==2.13.0"])
def test_torchaudio_2_11_0_cu126_goes_beside_every_torch_from_2_11_of_its_label(
    capsys: pytest.CaptureFixture[str], target: str, torch: str
) -> None:
    """torchaudio 2.11.0 is built against torch's stable ABI and supports torch 2.11 and
    every later release (pytorch/audio#4212; its wheels declare no torch pin,
    pytorch/audio#4189; docs/facts.md section 1.5): on a CUDA 12 driver its cu126 build
    goes beside torch 2.14.0+cu126 as beside 2.13.0+cu126, never with another label."""
    pkgs = _offline(capsys, target, torch, "torchaudio")
    ta = pkgs["torchaudio"]
    assert (ta["action"], ta["version"]) == ("rewrite", "2.11.0+cu126"), ta["reason"]
    assert ta["find_links"] == "https://download.pytorch.org/whl/cu126/torchaudio/"
    assert pkgs["torch"]["version"] == torch.split("==")[1] + "+cu126"


@pytest.mark.parametrize(
    "target", ["linux-x86_64-py312-cuda12.8-sm89", "linux-x86_64-py311-cuda12.4-sm80"]
)
def test_offline_refuses_torch_2_5_1_beside_triton_3_0_0_as_online_does(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Every build of torch 2.5.1 requires triton==3.1.0 on Linux x86_64 below Python
    3.13 (its METADATA; the shipped snapshot's release rows carry it, docs/facts.md
    section 6.11): offline, as online, the pair is refused before the installer runs,
    and torch 2.5.1 alone takes triton 3.1.0 (issue 49)."""
    torch = _offline(capsys, target, "torch==2.5.1", "triton==3.0.0")["torch"]
    assert torch["action"] == "error", torch["reason"]
    why = " ".join(f["reason"] for r in torch["rejected"] for f in r["failures"])
    assert "your requirement triton==3.0.0 rules out triton 3.1.0" in why
    alone = _offline(capsys, target, "torch==2.5.1")
    assert alone["torch"]["version"].startswith("2.5.1+"), alone["torch"]["reason"]
    assert "/triton-3.1.0-" in (alone["triton"]["url"] or ""), alone["triton"]["reason"]


def test_offline_torch_2_2_2_takes_the_triton_its_metadata_pins_where_its_marker_holds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """torch 2.2.2: ``triton==2.2.0`` below Python 3.12 (its METADATA), none above."""
    py311 = _offline(capsys, "linux-x86_64-py311-cuda12.4-sm80", "torch==2.2.2", "triton")
    assert "/triton-2.2.0-" in (py311["triton"]["url"] or ""), py311["triton"]["reason"]
    py312 = _offline(capsys, "linux-x86_64-py312-cuda12.8-sm89", "torch==2.2.2", "triton")
    assert "/triton-2.2.0-" not in (py312["triton"]["url"] or "")


@pytest.mark.parametrize("pin", ["torch==2.0.1", "torch==2.0.1+cu118", "torch==2.1.0+cu121"])
def test_a_release_without_a_build_for_this_python_is_refused_offline(
    capsys: pytest.CaptureFixture[str], pin: str
) -> None:
    """torch 2.0 and 2.1 have no CPython 3.12 wheels (PyTorch's release matrix: Python
    >=3.8, <=3.11; PyPI's files, docs/facts.md section 1.5): on Python 3.12 they are
    refused in page form too, and kept on Python 3.11."""
    torch = _offline(capsys, "linux-x86_64-py312-cuda12.8-sm89", pin)["torch"]
    assert torch["action"] == "error", torch["reason"]
    assert "built for Python 3.8, 3.9, 3.10, 3.11" in torch["refusal"]
    kept = _offline(capsys, "linux-x86_64-py311-cuda12.4-sm80", pin)["torch"]
    assert (kept["action"], kept["version"][:5]) == ("rewrite", pin.split("==")[1][:5])


@pytest.mark.parametrize("release", ["2.12.0", "2.11.0"])
def test_dgx_spark_gets_torch_from_its_cuda_13_aarch64_build(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    """PyTorch's support matrices for 2.11 and 2.12 list CUDA 13.0 aarch64 builds with
    sm_120 (pytorch/pytorch#172663, #182849), which runs on the GB10's sm_121: a pin to
    either is planned there, not refused as an x86_64-only release (issue 50)."""
    gb10 = "linux-aarch64-py312-cuda13.0-sm121"
    torch = _offline(capsys, gb10, f"torch=={release}")["torch"]
    assert (torch["action"], torch["version"]) == ("rewrite", f"{release}+cu130"), torch["reason"]


@pytest.mark.parametrize(
    ("pin", "pythons"),
    [
        ("torch==1.13.1+cu116", "3.7, 3.8, 3.9, 3.10"),
        ("torch==1.12.1", "3.7, 3.8, 3.9, 3.10"),
        ("torch==1.12.0+cu113", "3.7, 3.8, 3.9, 3.10"),
        ("torch==1.9.0+cu111", "3.6, 3.7, 3.8, 3.9"),
        ("torch==1.8.1+cpu", "3.6, 3.7, 3.8, 3.9"),
    ],
)
def test_a_torch_1_x_pin_is_refused_on_python_3_12_naming_the_nearest(
    capsys: pytest.CaptureFixture[str], pin: str, pythons: str
) -> None:
    """torch 1.8-1.13 have no CPython 3.12 wheels (PyPI's files, the release matrix;
    docs/facts.md section 1.5, "History, 1.x"): the pin is refused with the Pythons it
    was built for and the nearest release that runs, not passed as unjudged."""
    torch = _offline(capsys, "linux-x86_64-py312-cuda12.8-sm89", pin)["torch"]
    assert torch["action"] == "error", torch["reason"]
    assert f"built for Python {pythons}; this machine has Python 3.12" in torch["refusal"]
    assert "the nearest that does: torch==2.2.0+cu118" in torch["refusal"]


def test_torch_1_13_1_cu116_is_planned_where_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """On Python 3.10 with an A100 (sm_80, in the CUDA 11.6 build's kernel list) the
    1.13.1+cu116 pin is planned from its page, with its torchvision and torchaudio."""
    target = "linux-x86_64-py310-cuda12.4-sm80"
    pins = ("torch==1.13.1+cu116", "torchvision==0.14.1+cu116", "torchaudio==0.13.1+cu116")
    pkgs = _offline(capsys, target, *pins)
    for pin in pins:
        name, version = pin.split("==")
        assert (pkgs[name]["action"], pkgs[name]["version"]) == ("rewrite", version), pin
    assert pkgs["torch"]["find_links"] == "https://download.pytorch.org/whl/cu116/torch/"
    # The 1.13 label pages stop at Python 3.10 (release matrix; no cp311 file seen).
    py311 = _offline(capsys, "linux-x86_64-py311-cuda12.4-sm80", pins[0])["torch"]
    assert py311["action"] == "error", py311["reason"]


@pytest.mark.parametrize(
    ("target", "want"),
    [
        ("linux-x86_64-py311-cuda12.4-sm80", "2.6.0+cu124"),
        ("linux-x86_64-py312-cuda12.8-sm89", "2.6.0+cu126"),
    ],
)
def test_torch_2_6_0_is_planned_with_its_kernel_lists(
    capsys: pytest.CaptureFixture[str], target: str, want: str
) -> None:
    """torch 2.6's CUDA 11.8, 12.4 and 12.6 builds carry SASS up to sm_90 (docs/facts.md
    section 1.5): an A100 or an L40 gets a build, with the newest runtime its driver
    takes."""
    torch = _offline(capsys, target, "torch==2.6.0")["torch"]
    assert (torch["action"], torch["version"]) == ("rewrite", want), torch["reason"]


def test_torch_2_6_0_is_refused_on_blackwell(capsys: pytest.CaptureFixture[str]) -> None:
    """No 2.6 build carries sm_100 SASS: a B200 is refused, naming 2.7.0+cu128."""
    torch = _offline(capsys, "linux-x86_64-py312-cuda13.0-sm100", "torch==2.6.0")["torch"]
    assert torch["action"] == "error", torch["reason"]
    assert "the nearest that does: torch==2.7.0+cu128" in torch["refusal"]


def test_jetson_orin_gets_the_jetson_ai_lab_build() -> None:
    # JetPack 6 (L4T r36) takes NVIDIA's Jetson AI Lab index, never PyTorch's SBSA
    # builds (docs/facts.md section 1.2).
    p = plan("linux-aarch64-py310-cuda12.6-sm87-l4t36.4", "torch", "torchvision")
    torch, tv = p.package("torch"), p.package("torchvision")
    assert (torch.action, torch.version, tv.version) == ("rewrite", "2.8.0", "0.23.0")
    assert torch.url is not None
    assert torch.url.startswith("https://pypi.jetson-ai-lab.io/jp6/cu126/")
    assert not any("download.pytorch.org" in line for line in p.requirements)


def test_orin_asking_for_torch_2_13_is_refused_naming_the_jetson_build() -> None:
    p = plan("linux-aarch64-py310-cuda12.6-sm87-l4t36.4", "torch==2.13.*")
    torch = p.package("torch")
    assert torch.action == "error"
    assert "torch==2.8.0 (outside your specifier)" in map(str, torch.alternatives)
    # The server-Arm builds are refused for what they are, naming where Jetson wheels are.
    assert any(
        "jetson" in r.rules and "pypi.jetson-ai-lab.io/jp6/cu126" in r.reason
        for r in torch.rejected
    )
    assert not any("download.pytorch.org" in line for line in p.requirements)


@pytest.mark.parametrize(
    "target", ["linux-aarch64-py310-cuda12.6-sm90", "linux-aarch64-py310-cuda13.0-sm110"]
)
def test_the_jetson_build_is_never_offered_off_jetpack_6(target: str) -> None:
    # GH200 (a server, not a Jetson) and Thor on CUDA 13 (JetPack 7, SBSA).
    # Python 3.10: torch 2.14.1 is the newest with cp310 wheels (docs/facts.md 1.5).
    torch = plan(target, "torch").package("torch")
    assert torch.version is not None
    assert torch.version.startswith("2.14.1+cu")


def test_the_no_sha256_note_is_not_given_for_a_hashed_builtin_wheel() -> None:
    # The Jetson torch wheel is pinned by sha256; the PyTorch pages are not.
    orin = plan("linux-aarch64-py310-cuda12.6-sm87-l4t36.4", "torch")
    assert not any("no sha256" in n for n in orin.notes)
    gh200 = plan("linux-aarch64-py312-cuda13.0-sm90", "torch")
    assert any("carry no sha256" in n for n in gh200.notes)


def test_each_builtin_manifest_is_named_by_its_file() -> None:
    # collect_manifests reads a built-in manifest only when a plan looks it up, by the
    # name its file gives: the file name must be the package's canonical name.
    from resolver_hook.manifest import load

    for name, (source, parse) in load._builtin_sources().items():
        assert parse().name == name, source


def test_a_plan_reads_only_the_builtin_manifests_it_needs() -> None:
    from resolver_hook.manifest import collect_manifests, load
    from resolver_hook.resolve import resolve

    load._parse_builtin.cache_clear()
    manifests = collect_manifests(env={}, entry_points=None)
    assert "torch" in manifests
    assert load._parse_builtin.cache_info().currsize == 0  # names known, nothing read
    resolve(["natten"], manifests, parse_target("linux-x86_64-py312-cuda13.0-sm90"))
    # natten, and torch because natten's builds are coupled to torch's.
    assert load._parse_builtin.cache_info().currsize == 2


# --- the flavour forms in the shipped data (docs/facts.md section 6) -----------------


def test_cupy_on_a_cuda12_driver_installs_cupy_cuda12x() -> None:
    # CuPy's README: cupy-cuda12x for CUDA 12.x, cupy-cuda13x for 13.x (section 6.1).
    cupy = plan("linux-x86_64-py312-cuda12.6-sm89", "cupy").package("cupy")
    assert cupy is not None
    assert (cupy.action, cupy.installs) == ("rewrite", "cupy-cuda12x")
    assert cupy.line is not None
    assert cupy.line.startswith("cupy-cuda12x")


def test_cupy_on_a_cuda13_driver_installs_cupy_cuda13x() -> None:
    cupy = plan("linux-x86_64-py312-cuda13.0-sm89", "cupy").package("cupy")
    assert cupy is not None
    assert cupy.installs == "cupy-cuda13x"


def test_cli_plan_shows_both_names_for_cupy(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "cupy", "--target", "linux-x86_64-py312-cuda12.6-sm89"])
    out = capsys.readouterr().out
    assert code == 0
    # The newest file of the page (the shipped snapshot here), not the floor.
    assert "cupy-cuda12x==14.2.0 (for cupy)" in out


def test_pyg_lib_page_follows_the_chosen_torch_and_is_computed() -> None:
    # pyg-lib's README and CI matrix: torch 2.13.0 pages for cpu/cu126/cu130/cu132 (6.6).
    p = plan("linux-x86_64-py312-cuda13.0-sm89", "torch", "pyg-lib")
    torch, pyg = p.package("torch"), p.package("pyg-lib")
    assert torch is not None
    assert pyg is not None
    assert torch.version == "2.13.0+cu130"
    assert (pyg.find_links, pyg.computed) == (
        "https://data.pyg.org/whl/torch-2.13.0+cu130.html",
        True,
    )


def test_torch_scatter_takes_the_newest_torch_it_has_wheels_for() -> None:
    # torch-scatter and torch-sparse stop at torch 2.12 (docs/facts.md section 6.6): on a
    # cu130 machine torch goes to 2.12.1+cu130 and both to its PyG page, computed.
    p = plan("linux-x86_64-py312-cuda13.0-sm89", "torch", "torch-scatter", "torch-sparse")
    torch = p.package("torch")
    assert torch is not None
    assert torch.version == "2.12.1+cu130"
    for name in ("torch-scatter", "torch-sparse"):
        pkg = p.package(name)
        assert pkg is not None
        assert (pkg.action, pkg.find_links, pkg.computed) == (
            "rewrite",
            "https://data.pyg.org/whl/torch-2.12.0+cu130.html",
            True,
        )
    # torch alone takes the newest release, 2.15.0 (docs/facts.md section 1.5).
    assert plan("linux-x86_64-py312-cuda13.0-sm89", "torch").package("torch").version == (  # type: ignore[union-attr]
        "2.15.0+cu130"
    )


def test_torch_scatter_on_cuda_12_names_the_driver_that_gives_it_a_build() -> None:
    # No 2.12 cu126 build is listed (docs/facts.md section 1.5): refused, and the hint is
    # the newer driver that brings torch 2.12.1+cu130, read through the coupling.
    p = plan("linux-x86_64-py312-cuda12.6-sm89", "torch", "torch-scatter")
    scatter = p.package("torch-scatter")
    assert scatter is not None
    assert scatter.action == "error"
    assert scatter.fix is not None
    assert (scatter.fix.kind, scatter.fix.cuda) == ("driver", "13.0")
    assert scatter.fix.also == ("torch 2.12.1+cu130",)  # torch moves with it, and it says so
    assert scatter.hint.startswith("a driver of 580 or newer (CUDA 13.0) gets torch-scatter")
    assert "(with torch 2.12.1+cu130)" in scatter.hint
    # 2.14.1 is the newest torch with a cu126 build (docs/facts.md section 1.5).
    assert p.package("torch").version == "2.14.1+cu126"  # type: ignore[union-attr]


def test_enable_names_the_packages_that_do_not_go_with_the_newest_torch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # enable plans every built-in package together: torch takes 2.15.0 (torchvision
    # 0.29.2 and xformers 0.0.35 go with it, docs/facts.md sections 1.5 and 6.8), which
    # the flash-attn, natten and pyg-lib builds (torch 2.13), torch-scatter and
    # torch-sparse (torch 2.12) and tilert (torch>=2.11,<2.13 or ==2.11.0, section
    # 6.15) were not made for. Said apart from packages with no build for the machine
    # at all (none here).
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    target = "linux-x86_64-py312-cuda13.0-sm100"
    assert main(["enable", "--venv", str(venv), "--target", target]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "no build goes with the others' builds" in x]
    assert "flash-attn, natten, pyg-lib, tilert, torch-scatter, torch-sparse" in line
    assert "'resolver-hook plan NAME' finds builds for it alone" in line
    assert not [x for x in out.splitlines() if "no build fits this machine for" in x]
    assert "  xformers: 0.0.35: " in out


def test_xformers_goes_with_any_torch_from_2_10_of_its_cuda_major() -> None:
    # xformers 0.0.35 declares torch>=2.10 (docs/facts.md section 6.8).
    p = plan("linux-x86_64-py312-cuda13.0-sm89", "xformers", "torch")
    xf, torch = p.package("xformers"), p.package("torch")
    assert xf.find_links == "https://download.pytorch.org/whl/cu130/xformers/"
    assert torch.version == "2.15.0+cu130"
    p = plan("linux-x86_64-py312-cuda12.8-sm89", "xformers", "torch")
    xf, torch = p.package("xformers"), p.package("torch")
    assert xf.find_links == "https://download.pytorch.org/whl/cu128/xformers/"
    assert torch.version == "2.14.1+cu126"


@pytest.mark.parametrize(
    ("release", "torch"),
    [("0.0.33.post1", "2.9.0"), ("0.0.33.post2", "2.9.1"), ("0.0.34", "2.10.0")],
)
@pytest.mark.parametrize(
    "target",
    [
        "linux-x86_64-py312-cuda12.8-sm89",
        "linux-x86_64-py311-cuda12.4-sm80",
        "linux-x86_64-py312-cuda13.0-sm100",
    ],
)
def test_xformers_cuda_12_8_pypi_builds_couple_with_the_cu128_torch_build(
    capsys: pytest.CaptureFixture[str], target: str, release: str, torch: str
) -> None:
    # PyPI's 0.0.33.post1 to 0.0.34 are the torchX+cu128 builds (their upload filter;
    # docs/facts.md section 6.8): even on a CUDA 13 driver they go with cu128 torch.
    pkgs = _offline(capsys, target, f"xformers=={release}", "torch")
    assert pkgs["xformers"]["action"] == "pass", pkgs["xformers"]["reason"]
    assert pkgs["torch"]["version"] == f"{torch}+cu128"


@pytest.mark.parametrize("release", ["0.0.20", "0.0.21", "0.0.22"])
def test_xformers_torch_2_0_1_releases_are_judged_as_their_cuda_11_8_builds(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    # At these tags wheels.yml publishes only the torch 2.0.1 + cu118 build, and its
    # METADATA pins torch==2.0.1 (docs/facts.md section 6.8): an A100 under Python 3.11
    # gets it with torch 2.0.1's CUDA 11.8 build; under Python 3.12 (no cp312 file) none.
    a100 = "linux-x86_64-py311-cuda12.4-sm80"
    pkgs = _offline(capsys, a100, f"xformers=={release}", "torch")
    assert pkgs["xformers"]["cause"] != "unjudged", pkgs["xformers"]
    assert "couples with torch==2.0.1" in str(pkgs["xformers"]["reason"])
    assert pkgs["torch"]["version"] == "2.0.1+cu118"
    pkgs = _offline(capsys, "linux-x86_64-py312-cuda12.8-sm89", f"xformers=={release}")
    assert pkgs["xformers"]["action"] == "error", pkgs["xformers"]


def test_windows_torch_and_triton_take_the_newest_pair_triton_windows_has() -> None:
    # torch 2.14 pins Triton 3.8 and 2.15 pins 3.9; triton-windows has no 3.9, so
    # Windows gets torch 2.14.1 with triton-windows 3.8 (docs/facts.md section 6.11).
    p = plan("windows-x86_64-py312-cuda13.0-sm89", "torch", "triton")
    triton, torch = p.package("triton"), p.package("torch")
    assert torch.version == "2.14.1+cu130"
    assert triton.action == "rewrite"
    assert "triton-windows<3.9,>=3.8.0" in p.requirements


def test_onnxruntime_gpu_from_pypi_is_cuda_13_from_1_27() -> None:
    # docs/facts.md section 6.3: 1.27+ on PyPI need CUDA 13; CUDA 12 takes 1.19-1.26.
    cu13 = plan("linux-x86_64-py312-cuda13.0-sm89", "onnxruntime").package("onnxruntime")
    cu12 = plan("linux-x86_64-py312-cuda12.8-sm89", "onnxruntime").package("onnxruntime")
    assert (cu13.versions, cu12.versions) == (">=1.27", "<1.27,>=1.19")


def test_nvidia_dali_has_aarch64_builds() -> None:
    # PyPI has manylinux_2_28_aarch64 DALI wheels from 1.53.0 (docs/facts.md section 6.4).
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "nvidia-dali").package("nvidia-dali")
    assert (p.action, p.versions) == ("rewrite", ">=1.53.0")
    assert "nvidia-dali-cuda130" in (p.installs or "")


def test_faiss_gpu_is_metas_own_pypi_build_where_it_has_wheels() -> None:
    # docs/facts.md section 6.5: Meta's faiss-gpu 1.15.1 is manylinux_2_27 x86_64 only.
    meta = plan("linux-x86_64-py312-cuda12.8-sm89", "faiss-gpu").package("faiss-gpu")
    assert meta.action == "pass"
    old_glibc = plan("linux-x86_64-py312-glibc2.17-cuda12.8-sm89", "faiss-gpu")
    assert old_glibc.package("faiss-gpu").installs == "faiss-gpu-cu12"


def test_tilelang_on_a_mac_takes_the_wheel_not_a_source_build() -> None:
    # PyPI has macosx_11_0_arm64 tilelang wheels from 0.1.13 (docs/facts.md 6.13).
    p = plan("macos-arm64-py312", "tilelang").package("tilelang")
    assert p.action == "pass"


def test_llama_cpp_python_cuda_wheels_are_for_any_python() -> None:
    # The CUDA wheels are py3 (docs/facts.md section 6.7): Python 3.13 gets one too.
    p = plan("linux-x86_64-py313-cuda13.0-sm89", "llama-cpp-python").package("llama-cpp-python")
    assert p.find_links == "https://abetlen.github.io/llama-cpp-python/whl/cu130/llama-cpp-python/"


def test_llama_cpp_python_takes_the_nearest_cuda_index() -> None:
    # build-wheels-cuda.yaml: cu124/cu125 Windows and Linux; 12.6 driver -> cu125 (6.7).
    p = plan("linux-x86_64-py312-cuda12.6-sm89", "llama-cpp-python").package("llama-cpp-python")
    assert p is not None
    assert p.find_links == "https://abetlen.github.io/llama-cpp-python/whl/cu125/llama-cpp-python/"
    assert p.versions == ">=0.3.35"


def test_jax_cuda_extras_are_linux_only() -> None:
    jax = plan("linux-aarch64-py312-cuda13.0-sm90", "jax").package("jax")
    assert jax is not None
    assert jax.installs == "jax[cuda13]"
    win = plan("windows-x86_64-py312-cuda13.0-sm89", "jax").package("jax")
    assert win is not None
    assert win.action == "error"


def test_deepspeed_is_built_from_its_sdist() -> None:
    ds = plan("linux-x86_64-py312-cuda13.0-sm89", "deepspeed").package("deepspeed")
    assert ds is not None
    assert (ds.action, ds.build_needs) == ("build", ("ninja",))


def test_bitsandbytes_needs_no_flavour() -> None:
    bnb = plan("linux-x86_64-py312-cuda13.0-sm89", "bitsandbytes").package("bitsandbytes")
    assert bnb is not None
    assert (bnb.action, bnb.line) == ("pass", "bitsandbytes")
    # The newest release's entry is the one chosen (0.50.x carries kernel facts too, so
    # it is not a CPU build passed over for 0.49's on a GPU machine).
    below = {r.candidate for r in bnb.rejected if "ranked below" in r.failures[0].reason}
    assert "bitsandbytes <0.51,>=0.50.0 (default index)" not in below
    assert "bitsandbytes <0.50,>=0.49.0 (default index)" in below


@pytest.mark.parametrize(
    ("target", "pin", "action"),
    [
        # 0.45.1's libraries (CUDA 11.7 to 12.6) carry SASS up to sm_90, no PTX
        ("linux-x86_64-py312-cuda12.8-sm89", "bitsandbytes==0.45.1", "pass"),
        ("linux-x86_64-py312-cuda13.0-sm100", "bitsandbytes==0.45.1", "error"),
        ("linux-aarch64-py312-cuda13.0-sm121", "bitsandbytes==0.45.1", "error"),  # no wheel
        ("linux-aarch64-py312-cuda13.0-sm121", "bitsandbytes==0.46.*", "pass"),  # sm_120
        ("linux-x86_64-py312-cuda13.0-sm100", "bitsandbytes==0.49.*", "pass"),
    ],
)
def test_bitsandbytes_pins_are_judged_by_the_kernels_of_their_wheels(
    target: str, pin: str, action: str
) -> None:
    bnb = plan(target, pin).package("bitsandbytes")
    assert bnb is not None
    assert (bnb.action, bnb.cause == "unjudged") == (action, False)


@pytest.mark.parametrize(
    "target", ["linux-x86_64-py312", "linux-aarch64-py312", "macos-arm64-py312"]
)
@pytest.mark.parametrize(
    "pin", ["bitsandbytes==0.45.1", "bitsandbytes==0.46.1", "bitsandbytes==0.49.2"]
)
def test_bitsandbytes_pins_fit_a_machine_without_a_gpu(target: str, pin: str) -> None:
    # Each wheel carries libbitsandbytes_cpu beside its CUDA libraries (`cpu = true`).
    bnb = plan(target, pin).package("bitsandbytes")
    assert bnb is not None
    # PyPI's files: no aarch64 wheel of 0.45.1, macOS arm64 wheels from 0.49.0 on.
    missing = ("aarch64" in target and pin.endswith("0.45.1")) or (
        target.startswith("macos") and not pin.endswith("0.49.2")
    )
    assert bnb.action == ("error" if missing else "pass"), bnb


def test_a_cpu_build_is_still_refused_on_a_gpu_it_carries_no_kernels_for() -> None:
    bnb = plan("linux-x86_64-py312-cuda13.0-sm100", "bitsandbytes==0.45.1").package("bitsandbytes")
    assert bnb is not None
    assert bnb.action == "error"
    assert "sm_100" in bnb.reason + " ".join(str(r) for r in bnb.rejected), bnb


def test_bitsandbytes_0_38_stays_unjudged() -> None:
    # It loads the library of the libcudart it finds on the machine, not torch's.
    bnb = plan("linux-x86_64-py312-cuda12.8-sm89", "bitsandbytes==0.38.1").package("bitsandbytes")
    assert bnb is not None
    assert (bnb.action, bnb.cause) == ("pass", "unjudged")


def test_the_readme_lists_every_builtin_package() -> None:
    from tests.paths import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    # The table scripts/builtin_table.py writes between its markers.
    table = readme.split("<!-- builtin-packages:start", 1)[1].split("<!-- builtin-packages:end", 1)[
        0
    ]
    for m in builtin_manifests().values():
        assert m.display_name in table, m.display_name


def test_a_gpu_rocm_7_2_torch_was_not_built_for_is_refused_with_the_reason() -> None:
    # PyTorch's ROCm 7.2 wheels are built for PYTORCH_ROCM_ARCH (docs/facts.md section
    # 1.13); gfx803 (Polaris) is not in it, gfx942 (MI300) is.
    p = plan("linux-x86_64-py312-rocm7.2-gfx803", "torch")
    torch = p.package("torch")
    assert torch is not None
    assert torch.action == "error"
    (rocm,) = [r for r in torch.rejected if r.candidate.startswith("torch 2.13.0+rocm7.2")]
    assert rocm.rules == ("gpu",)
    assert rocm.reason.startswith("built for AMD GPUs gfx900, gfx906, gfx908, gfx90a, gfx942")
    assert rocm.reason.endswith("this machine's gfx803 is not one of them")
    assert torch.hint  # the CPU build, or the change that gives a fit
    ok = plan("linux-x86_64-py312-rocm7.2-gfx942", "torch")
    assert ok.package("torch").version == "2.13.0+rocm7.2"  # type: ignore[union-attr]
    assert "gfx942" in ok.package("torch").reason  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("target", "pin", "action"),
    [
        # Blackwell came in triton 3.3; sm_121 needs the ptxas-blackwell of 3.6.
        ("linux-x86_64-py312-cuda13.0-sm100", "triton==3.2.0", "error"),
        ("linux-x86_64-py312-cuda13.0-sm100", "triton==3.5.0", "pass"),
        ("linux-aarch64-py312-cuda13.0-sm121", "triton==3.5.0", "error"),
        ("linux-x86_64-py312-cuda12.8-sm89", "triton==3.2.0", "pass"),
        # No floor is held (the sources disagree: 8.0+ in triton's README, 7.0 in
        # PyTorch's inductor), so a T4 keeps torch 2.6's triton.
        ("linux-x86_64-py312-cuda12.8-sm75", "triton==3.2.0", "pass"),
        ("linux-x86_64-py312-cuda12.8-sm75", "torch==2.6.0", "rewrite"),
    ],
)
def test_old_triton_is_judged_by_the_newest_gpu_its_compiler_knows(
    target: str, pin: str, action: str
) -> None:
    name = pin.split("==", maxsplit=1)[0]
    got = plan(target, pin).package(name)
    assert got is not None
    assert got.action == action, got.reason
    assert got.cause != "unjudged"
    if action == "error":
        reasons = [f.reason for r in got.rejected for f in r.failures]
        assert any("its compiler knows GPUs up to compute capability" in r for r in reasons)


def test_a_coupling_whose_marker_is_false_here_is_not_named_as_a_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """torch 2.10.0+cu130's triton pin holds on Linux x86_64 only: the reason names it
    there, without its marker, and not on an aarch64 machine, where it binds nothing."""
    x86 = _offline(capsys, "linux-x86_64-py312-cuda13.0-sm100", "torch==2.10.0")["torch"]
    assert x86["version"] == "2.10.0+cu130", x86["reason"]
    assert "couples with triton==3.6.0;" in x86["reason"], x86["reason"]
    assert "platform_machine" not in x86["reason"], x86["reason"]
    arm = _offline(capsys, "linux-aarch64-py312-cuda13.0-sm121", "torch==2.10.0")["torch"]
    assert arm["version"] == "2.10.0+cu130", arm["reason"]
    assert "triton" not in arm["reason"], arm["reason"]
