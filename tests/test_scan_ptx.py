"""The driver floor from PTX when no CUDA runtime is linked (portable.cuda.ptx_isa_cuda
and resolver_hook.binaries.scan). docs/facts.md section 1: PTX from a newer toolkit cannot be
JIT-compiled by an older driver, so PTX-only coverage needs driver CUDA >= the toolkit."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.binaries.scan import ObjectReport, _cuda_from_ptx, scan_wheel
from resolver_hook.portable.cuda import ptx_isa_cuda
from tests.cudawheels import KERNELS, PTX, binary_wheel

NEWPTX = (Path(__file__).resolve().parent / "data" / "cuda" / "libnewptx.so").read_bytes()


# NVIDIA PTX ISA release notes, "PTX release history" (also cuda-python's _ptx_utils.py);
# 9.5 from a secondary source (docs/facts.md section 1.8).
@pytest.mark.parametrize(
    ("isa", "cuda"),
    [
        ((9, 5), (13, 5)),
        ((9, 4), (13, 4)),
        ((9, 3), (13, 3)),
        ((9, 2), (13, 2)),
        ((9, 1), (13, 1)),
        ((9, 0), (13, 0)),
        ((8, 8), (12, 9)),
        ((8, 7), (12, 8)),
        ((8, 6), (12, 7)),
        ((8, 5), (12, 5)),
        ((8, 0), (12, 0)),
        ((7, 8), (11, 8)),
    ],
)
def test_ptx_isa_to_cuda(isa: tuple[int, int], cuda: tuple[int, int]) -> None:
    assert ptx_isa_cuda(isa) == (cuda, True)


def test_unknown_newer_isa_is_a_lower_bound() -> None:
    assert ptx_isa_cuda((9, 9)) == ((13, 5), False)


def test_a_guessed_floor_is_worded_as_a_guess_in_every_note() -> None:
    notes: list[str] = []
    assert _cuda_from_ptx([_obj(("sm_90", "compute_90"), (9, 9))], notes, 13) == ">=13.5"
    assert len(notes) == 2
    assert notes[0].startswith("PTX ISA 9.9 is not in this tool's table; assuming")
    assert "a guess" in notes[0]
    # The follow-up never states the guess as fact ("PTX ISA 9.9 comes from CUDA 13.5").
    assert "comes from" not in notes[1]
    assert "at the least (the guess above)" in notes[1]


def test_ptx_beside_sass_without_runtime_needs_the_toolkit_major(tmp_path: Path) -> None:
    # libptx.so: sm_80 SASS + compute_100f PTX of ISA 9.0, -cudart none.
    report = scan_wheel(
        binary_wheel(tmp_path, "p-1.0-cp312-cp312-linux_x86_64.whl", {"p/libptx.so": PTX})
    )
    assert report.objects[0].ptx_isa == (9, 0)
    assert report.cuda == ">=13.0"
    assert report.notes == (
        "no CUDA runtime in NEEDED; PTX ISA 9.0 comes from CUDA 13.0: JIT-compiling that PTX "
        "needs a driver for CUDA >= 13.0 (the SASS targets alone would run on CUDA >= 13.0)",
    )


def test_linked_runtime_wins_over_ptx(tmp_path: Path) -> None:
    report = scan_wheel(
        binary_wheel(tmp_path, "k-1.0-cp312-cp312-linux_x86_64.whl", {"k/libkernels.so": KERNELS})
    )
    assert (report.cuda, report.notes) == (">=13.0", ())


def test_ptx_newer_than_the_linked_runtime_raises_the_floor(tmp_path: Path) -> None:
    # libnewptx.so: sm_90 SASS + PTX compute_120 whose ISA was rewritten to 9.1
    # (scripts/make_cuda_fixtures.sh); NEEDED has libcudart.so.13. The runtime alone
    # says 13.0, but JIT of ISA 9.1 needs a CUDA 13.1 driver (docs/facts.md section 1).
    report = scan_wheel(
        binary_wheel(tmp_path, "n-1.0-cp312-cp312-linux_x86_64.whl", {"n/libnewptx.so": NEWPTX})
    )
    (obj,) = report.objects
    assert (obj.cuda_runtime, obj.ptx_isa, report.gpu) == (13, (9, 1), ("sm_90", "compute_120"))
    assert report.cuda == ">=13.1"
    assert report.notes == (
        "links CUDA runtime 13; PTX ISA 9.1 comes from CUDA 13.1: JIT-compiling that PTX "
        "needs a driver for CUDA >= 13.1 (the SASS targets alone would run on CUDA >= 13.0)",
    )


def _obj(targets: tuple[str, ...], isa: tuple[int, int] | None) -> ObjectReport:
    return ObjectReport(
        path="x/lib.so",
        machine="x86_64",
        bits=64,
        needed=(),
        targets=targets,
        cuda_runtime=None,
        torch_linked=False,
        ptx_isa=isa,
    )


@pytest.mark.parametrize(
    ("targets", "isa", "cuda"),
    [
        pytest.param(("compute_90",), (8, 7), ">=12.8", id="ptx-only-12.8"),
        pytest.param(("sm_90", "compute_90"), (8, 7), ">=12.8", id="with-sass-12.8"),
        pytest.param(("compute_80",), (8, 6), ">=12.7", id="ptx-only-12.7"),
        pytest.param(("sm_90",), None, None, id="sass-only-unknown"),
    ],
)
def test_floor_from_ptx(
    targets: tuple[str, ...], isa: tuple[int, int] | None, cuda: str | None
) -> None:
    notes: list[str] = []
    assert _cuda_from_ptx([_obj(targets, isa)], notes) == cuda
    assert bool(notes) == (isa is not None)


@pytest.mark.parametrize(
    ("runtime", "isa", "cuda", "noted"),
    [
        pytest.param(13, (9, 1), ">=13.1", True, id="isa-above-runtime"),
        pytest.param(13, (9, 0), ">=13.0", False, id="isa-equal"),
        pytest.param(13, (8, 7), ">=13.0", False, id="runtime-above-isa"),
    ],
)
def test_floor_is_the_higher_of_runtime_and_ptx_isa(
    runtime: int, isa: tuple[int, int], cuda: str, noted: bool
) -> None:
    notes: list[str] = []
    assert _cuda_from_ptx([_obj(("compute_120",), isa)], notes, runtime) == cuda
    assert bool(notes) == noted
