"""scan on wheels laid out like real ones: standalone cubins (flashinfer-cubin), one
library per CUDA runtime (bitsandbytes), SASS beside newer PTX (cupy), an auditwheel-renamed
runtime, ROCm beside CUDA (tilert). The objects are nvcc-built (tests/cudawheels.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.binaries.fatbin import FatbinError, cubin_target
from resolver_hook.binaries.scan import _jetson_notes, scan_wheel
from tests.cudawheels import KERNELS, binary_wheel, fixture
from tests.test_scan import _tiny_elf

CUBINS = {
    "fi/cubins/k_sm100f.cubin": fixture("k_sm100f.cubin"),
    "fi/cubins/k_sm100a.cubin": fixture("k_sm100a.cubin"),
    "fi/cubins/k_sm103a.cubin": fixture("k_sm103a.cubin"),
    "fi/cubins/k.fatbin": fixture("k.fatbin"),
}
BNB = {f"bnb/libbnb_cuda{v}.so": fixture(f"libbnb_cuda{v}.so") for v in (11, 12, 13)}


def test_cubin_and_fatbin_members_are_read_like_fatbin_sections(tmp_path: Path) -> None:
    report = scan_wheel(binary_wheel(tmp_path, "fi-1.0-py3-none-any.whl", CUBINS))
    # The cubin built with compute_100f,code=sm_100 reads as sm_100f, as the same code
    # does in a fatbin entry; sm_100a and sm_103a keep their suffix.
    assert report.gpu == ("compute_100f", "sm_100a", "sm_100f", "sm_103a")
    by_path = {o.path: (o.kind, o.targets) for o in report.objects}
    assert by_path["fi/cubins/k_sm100f.cubin"] == ("cubin", ("sm_100f",))
    assert by_path["fi/cubins/k.fatbin"] == ("fatbin", ("compute_100f", "sm_100f"))
    assert report.notes[0] == (
        "4 CUDA binaries (cubin/fatbin: GPU code, no host CPU) in a wheel tagged 'any': "
        "fi/cubins/k_sm100f.cubin, fi/cubins/k_sm100a.cubin, fi/cubins/k_sm103a.cubin "
        "and 1 more"
    )
    # The fatbin's PTX (ISA 9.0) gives the driver floor; no runtime is linked.
    assert report.notes[1].startswith("no CUDA runtime in NEEDED; PTX ISA 9.0 comes from")
    assert len(report.notes) == 2
    assert report.cuda == ">=13.0"


def test_a_wheel_of_many_cubins_gets_one_note_line(tmp_path: Path) -> None:
    cubin = fixture("k_sm100a.cubin")
    members = {f"fi/c/{i:05d}.cubin": cubin for i in range(400)}
    report = scan_wheel(binary_wheel(tmp_path, "fi-1.0-py3-none-any.whl", members))
    assert report.gpu == ("sm_100a",)
    assert len(report.objects) == 400
    (note,) = report.notes
    assert note.startswith("400 CUDA binaries")
    assert note.endswith("and 397 more")


def test_cubin_target_rejects_a_note_that_contradicts_e_flags() -> None:
    # nvcc 13 (ELF ABI 8) writes the SM in bits 8-15: 0x06006402 is sm_100.
    assert cubin_target(0x06006402, 8, b"ptxas\0-arch sm_100a -m 64 ") == "sm_100a"
    assert cubin_target(0x06006402, 8, None) == "sm_100"
    assert cubin_target(0x00500550, 7, None) == "sm_80"  # ABI 7: bits 0-7
    with pytest.raises(FatbinError, match="sm_100 but its ptxas note says sm_90"):
        cubin_target(0x06006402, 8, b"-arch sm_90 ")


def test_one_library_per_runtime_scans_to_the_lowest(tmp_path: Path) -> None:
    report = scan_wheel(binary_wheel(tmp_path, "bnb-1.0-py3-none-manylinux_2_24_x86_64.whl", BNB))
    assert sorted(o.cuda_runtime for o in report.objects) == [11, 12, 13]
    assert report.cuda == ">=11.0"
    assert report.floors == (("sm_75", ">=11.0"), ("sm_80", ">=11.0"))
    (note,) = report.notes
    assert note.startswith("one library per CUDA runtime, chosen at run time (CUDA 11: ")
    assert "the wheel serves the lowest, CUDA >= 11.0" in note


def test_a_library_linking_two_runtimes_needs_the_higher(tmp_path: Path) -> None:
    both = _tiny_elf(
        bits=64, little=True, machine=62, needed=("libcudart.so.12", "libcublas.so.13")
    )
    wheel = binary_wheel(tmp_path, "x-1.0-cp312-cp312-linux_x86_64.whl", {"x/lib.so": both})
    report = scan_wheel(wheel)
    assert report.cuda == ">=13.0"
    assert report.notes == (
        "links CUDA runtimes of several majors: [12, 13] (x/lib.so links more than one, so "
        "CUDA 13 is needed)",
    )


def test_sass_and_ptx_get_their_own_driver_floors(tmp_path: Path) -> None:
    # cupy-cuda12x's pattern: sm_89 SASS runs on any CUDA 12 driver; the PTX of ISA 8.8
    # needs CUDA 12.9 to JIT (docs/facts.md section 1.8).
    members = {"cp/libcupylike.so": fixture("libcupylike.so")}
    report = scan_wheel(binary_wheel(tmp_path, "cp-1.0-cp312-cp312-linux_x86_64.whl", members))
    assert report.gpu == ("compute_89", "sm_89")
    assert report.cuda == ">=12.9"
    assert report.floors == (("compute_89", ">=12.9"), ("sm_89", ">=12.0"))


def test_auditwheel_renamed_runtime_is_recognised(tmp_path: Path) -> None:
    members = {"r/librenamed.so": fixture("librenamed.so")}
    report = scan_wheel(binary_wheel(tmp_path, "r-1.0-cp312-cp312-linux_x86_64.whl", members))
    (obj,) = report.objects
    assert "libcudart-53d54daa.so.12.6.68" in obj.needed
    assert (obj.cuda_runtime, report.cuda, report.gpu) == (12, ">=12.0", ("sm_90",))
    assert report.notes == ()


def test_rocm_libraries_and_gfx_targets_are_reported(tmp_path: Path) -> None:
    members = {"t/librocmk.so": fixture("librocmk.so")}
    report = scan_wheel(binary_wheel(tmp_path, "t-1.0-cp312-cp312-linux_x86_64.whl", members))
    assert report.rocm == ("gfx90a", "gfx942")
    assert report.rocm_libraries == ("libamdhip64.so.7",)
    assert (report.cuda, report.gpu) == (None, ())
    assert report.notes == (
        "ROCm: t/librocmk.so (links libamdhip64.so.7, AMD GPU code for gfx90a, gfx942); "
        "ROCm only: no CUDA requirement is derived from it",
    )


def test_a_wheel_with_cuda_and_rocm_says_so(tmp_path: Path) -> None:
    members = {"t/librocmk.so": fixture("librocmk.so"), "t/libkernels.so": KERNELS}
    report = scan_wheel(binary_wheel(tmp_path, "t-1.0-cp312-cp312-linux_x86_64.whl", members))
    assert report.cuda == ">=13.0"
    (note,) = report.notes
    assert "carries both CUDA and ROCm libraries" in note


def test_jetson_build_lists_its_tegra_target(tmp_path: Path) -> None:
    members = {"j/libjetson.so": fixture("libjetson.so")}
    wheel = binary_wheel(tmp_path, "j-1.0-cp310-cp310-manylinux_2_35_aarch64.whl", members)
    report = scan_wheel(wheel)
    (obj,) = report.objects
    assert (obj.machine, obj.targets, obj.cuda_runtime) == ("aarch64", ("sm_87",), 12)
    # SASS for a Tegra CC runs on that Jetson only (docs/facts.md 1.1); which L4T
    # releases the host side supports is not in the binary, so nothing is guessed.
    (note,) = report.notes
    assert note.startswith("Jetson-capable: SASS for sm_87 (Jetson Orin), which runs on")
    assert "no l4t range is written" in note


def test_sass_for_thor_under_cuda_13_is_no_jetson_note(tmp_path: Path) -> None:
    # CC 11.0 (Thor, JetPack 7) uses the server-Arm builds (docs/facts.md 1.2).
    assert _jetson_notes(["cp312-cp312-manylinux_2_28_aarch64"], ["sm_110"]) == []
    assert _jetson_notes(["cp312-cp312-manylinux_2_28_x86_64"], ["sm_87"]) == []
    assert _jetson_notes(["cp312-cp312-manylinux_2_28_aarch64"], ["sm_72"]) != []
